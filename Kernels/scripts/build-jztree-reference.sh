#!/usr/bin/env bash
# Builds the jz-tree reference implementation (jstuecker/jztree: JAX + CUDA
# through XLA's FFI) from a fetched copy of its sources, outside this
# repository, on a GPU machine that has JAX, nanobind, CMake and nvcc (no
# package registry needed). Used by gpu-check.sh for side-by-side timings.
#   build-jztree-reference.sh SOURCE_DIR PREFIX
# Afterwards: PYTHONPATH=PREFIX:SOURCE_DIR/src python3 -c "import jztree"
set -euo pipefail
src="$1"
prefix="$2"
build="$prefix/build"
py="${PYTHON:-python3}"
mkdir -p "$build"
# Its CMakeLists prefers a pip-installed CUDA toolkit; use the system nvcc.
sed -i 's/from nvidia import cu13/import jz_no_pip_cuda_toolkit/' "$src/CMakeLists.txt"
# jax.jax.tree_util is gone from newer JAX (0.11 on the GPU machine).
sed -i 's/jax\.jax\.tree_util/jax.tree_util/g' "$src"/src/jztree/*.py
# Outside shard_map, JAX 0.11's ShapedArray has no .vma: there is nothing to
# cast to "varying" then, so pcast_like/pcast_vma return their input.
sed -i -e 's/^def pcast_like(x, like):$/&\n    if not getattr(jax.typeof(like), "vma", None): return x/' \
  -e 's/^def pcast_vma(x, vma):$/&\n    if not vma: return x/' "$src/src/jztree/jax_ext.py"
CUDAARCHS="${CUDAARCHS:-90}" cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSKBUILD_PROJECT_NAME=jztree -DPython_EXECUTABLE="$(command -v "$py")" \
  -DCMAKE_CUDA_COMPILER="${CUDACXX:-/usr/local/cuda/bin/nvcc}" \
  -Dnanobind_DIR="$("$py" -m nanobind --cmake_dir)"
cmake --build "$build" --parallel "$(nproc)"
cmake --install "$build" --prefix "$prefix"
# Outside scikit-build the modules come out as NAME.SOABI.so.so.
for f in "$prefix"/jztree_cuda/*.so.so; do [ -e "$f" ] && mv "$f" "${f%.so}"; done
echo "jztree reference built in $prefix (PYTHONPATH=$prefix:$src/src)"
