#!/usr/bin/env bash
# Builds the GPU peer, ArborX on Kokkos's CUDA backend (sm_90), from fetched
# copies of their sources outside this repository, with the ArborX anchors
# (arborx_knn, arborx_emst from ../shared/anchors), and gathers the two
# binaries with the CUDA runtime they link into OUT (bin/, lib/) to carry to
# a GPU machine beside the prebuilt benchmarks (gpu-peers.sh runs them).
#   build-arborx-cuda.sh KOKKOS_SRC ARBORX_SRC ANCHORS_DIR OUT
# e.g. with Kokkos 4.6.01 and ArborX v2.1 checked out, from the repository
# root (gpubin/ is git-ignored):
#   Kernels/scripts/build-arborx-cuda.sh /tmp/kokkos /tmp/arborx ../shared/anchors gpubin/peers
# Kokkos before 4.7.1 does not compile against CUDA 13's runtime API: the
# copy in KOKKOS_SRC is patched in place for it (three calls whose
# signatures changed, and nvcc_wrapper's default architecture, which CUDA 13
# no longer has). The build directories go to OUT.build/ (JZ_PEERS_BUILD to
# change it).
set -euo pipefail

kokkos="$(realpath "${1:?Kokkos source}")"
arborx="$(realpath "${2:?ArborX source}")"
anchors="$(realpath "${3:?anchors folder}")"
out="$(realpath -m "${4:?output folder}")"
build="${JZ_PEERS_BUILD:-$out.build}"
export CUDACXX="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
wrapper="$kokkos/bin/nvcc_wrapper"

sed -i 's/^default_arch="sm_70"/default_arch="sm_90"/' "$wrapper"
python3 - "$kokkos/core/src/Cuda/Kokkos_Cuda_Instance.hpp" <<'EOF'
import sys
path = sys.argv[1]
s = open(path).read()
if "CUDART_VERSION >= 13000" not in s:
    def location(var):
        return (f"    cudaMemLocation loc;\n"
                f"    loc.type = {var} == cudaCpuDeviceId ? cudaMemLocationTypeHost\n"
                f"                                     : cudaMemLocationTypeDevice;\n"
                f"    loc.id = {var} == cudaCpuDeviceId ? 0 : {var};\n")
    edits = [
        ("    return cudaGraphAddDependencies(graph, from, to, numDependencies);",
         "    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);"),
        ("    return cudaMemAdvise(devPtr, count, advice, device);",
         location("device") + "    return cudaMemAdvise(devPtr, count, advice, loc);"),
        ("    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n"
         "                                get_input_stream(stream));",
         location("dstDevice") +
         "    return cudaMemPrefetchAsync(devPtr, count, loc, 0, get_input_stream(stream));"),
    ]
    for old, new in edits:
        if old not in s:
            sys.exit(f"{path}: unexpected source (no '{old.strip()}')")
        s = s.replace(old, f"#if CUDART_VERSION >= 13000\n{new}\n#else\n{old}\n#endif")
    open(path, "w").write(s)
EOF

cmake -S "$kokkos" -B "$build/kokkos" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$wrapper" -DCMAKE_CXX_STANDARD=20 -DCMAKE_INSTALL_PREFIX="$build/install" \
  -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_HOPPER90=ON \
  -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF > /dev/null
cmake --build "$build/kokkos" --parallel "$(nproc)"
cmake --install "$build/kokkos" > /dev/null
cmake -S "$arborx" -B "$build/arborx" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$wrapper" -DCMAKE_INSTALL_PREFIX="$build/install" \
  -DKokkos_ROOT="$build/install" -DARBORX_ENABLE_MPI=OFF > /dev/null
cmake --build "$build/arborx" --target install > /dev/null
cmake -S "$anchors/arborx" -B "$build/anchors" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$wrapper" -DCMAKE_PREFIX_PATH="$build/install" > /dev/null
cmake --build "$build/anchors" --parallel "$(nproc)"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$build/anchors/arborx_knn" "$build/anchors/arborx_emst" "$out/bin/"
# The CUDA runtime they were linked against (the driver, libcuda, is the
# GPU machine's own).
cudart="$(ldd "$out/bin/arborx_knn" | awk '/libcudart/ {print $3}')"
[ -n "$cudart" ] && cp -L "$cudart" "$out/lib/"
du -sh "$out"
