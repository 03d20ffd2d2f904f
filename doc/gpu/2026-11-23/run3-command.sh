#!/usr/bin/env bash
# This session's last GPU call: benchmarks beside the jz-tree reference, then
# the rest of the CUDA tests and the four sanitizers side by side.
set -o pipefail
export CUDAARCHS=90
root=$PWD
Kernels/scripts/build-jztree-reference.sh $root/.jzref /tmp/jzref > $OUT/jztree-build.log 2>&1 & jz=$!
cmake -S Kernels -B /tmp/b -G Ninja -DJZ_CUDA_ASSERTS=ON > /dev/null && cmake --build /tmp/b -j 12 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
wait $jz; echo "jztree build rc=$?"
B=/tmp/b/bench
R="timeout 90 env PYTHONPATH=/tmp/jzref:$root/.jzref/src JZTREE_SKIP_JAX_CUDA_CHECK=1 XLA_PYTHON_CLIENT_PREALLOCATE=false python3 Kernels/bench/jztree_reference.py"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $B/jz_bench_knn_cuda 1e7 16 uniform 5 --pinned --dump /tmp/p7.f32
  $R knn /tmp/p7.f32 16 5
  $B/jz_bench_fof_cuda 134217728 clustered float 2 --pinned --dump /tmp/pf.f32
  $R fof /tmp/pf.f32 0.000390625 1.0 3
  rm -f /tmp/pf.f32
} > $OUT/reference.log 2>&1
grep -E "RESULT|Error" $OUT/reference.log
rm -f /tmp/p*.f32
# The CUDA test cases the last call's time limit cut off, side by side.
rest="TestKnn:KnnLarge TestKnn:KnnLeafBatches TestKnn:KnnVeryLargeK TestKnn:KnnDensityIndependentOfLists TestKnn:KnnNamesFirstNonFinitePoint TestKnn:KnnAutoBackend TestFof:FofAllKindsLargerSets TestFof:FofLargeSets TestFof:FofLatticeBoxes TestFof:FofOutputsWanted TestFof:FofEmptyInput TestFof:FofNamesFirstNonFinitePoint TestFof:FofAutoBackend"
for tc in $rest; do
  ( export OMP_NUM_THREADS=2; timeout 210 /tmp/b/tests/${tc%%:*} --backend=cuda ${tc#*:} > /tmp/t-${tc#*:}.log 2>&1; echo "rc=$? ${tc}" >> /tmp/t-${tc#*:}.log ) &
done
JZ_SKIP_BENCH=1 JZ_SKIP_TESTS=1 timeout 220 Kernels/scripts/gpu-check.sh /tmp/b > $OUT/sanitizers.log 2>&1; echo "sanitizers rc=$?"
wait
cat /tmp/t-*.log > $OUT/cuda-tests-rest.log
grep -E "rc=|FAIL" $OUT/cuda-tests-rest.log
for t in memcheck racecheck synccheck initcheck; do cp /tmp/b/sanitizer-$t.log $OUT/ 2>/dev/null; done
grep -E "SUMMARY|FAILED" $OUT/sanitizers.log | sort | uniq -c
