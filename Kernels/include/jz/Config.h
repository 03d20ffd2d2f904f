// Build-wide definitions shared by host and device code.
#pragma once

#include <cstddef>
#include <cstdint>

// JZ_HD marks functions that the CPU backend and the CUDA kernels share, so
// that the CPU tests exercise the very per-node and per-point logic the GPU runs.
#if defined(__CUDACC__)
#define JZ_HD __host__ __device__ __forceinline__
#define JZ_DEVICE_CODE 1
#else
#define JZ_HD inline
#endif

namespace jz
{
// Local point and node indices. One process (MPI rank) holds at most 2^32 - 2
// points; global identifiers are 64-bit.
using Index = std::uint32_t;
using GlobalId = std::int64_t;

constexpr int kDim = 3;
constexpr double kInfinity = __builtin_huge_val();

// Tree parameters of §II-C.
constexpr int kLeafSize = 48;             // N_max^(0)
constexpr int kCoarsening = 8;            // c
constexpr int kTopNodesTarget = 1000;     // N_target for the coarsest plane
constexpr int kRegularizationFactor = 50; // f_max of section II-D
} // namespace jz
