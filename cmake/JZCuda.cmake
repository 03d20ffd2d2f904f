# CUDA detection for jz-tree, included by the top-level CMakeLists.txt and by
# Kernels/CMakeLists.txt (which also builds on its own, e.g. on a GPU machine
# with nvcc and CMake only). Defines the option JZ_ENABLE_CUDA and sets
# JZ_WITH_CUDA to ON when a CUDA compiler was found and the language enabled.
#
# CMake wants a language enabled in the highest directory common to all
# targets that use it, including through link dependencies (the plugin links
# the CUDA kernels), so the top directory includes this first; the guard makes
# the second include (from Kernels/) a no-op that keeps the parent's result.
include_guard(GLOBAL)

option(JZ_ENABLE_CUDA "Build the CUDA backend when a CUDA compiler is found" ON)
# Device-side post-conditions (e.g. "every group pointer is a root after a
# contraction"); on in Debug builds, and in Kernels/scripts/gpu-check.sh.
option(JZ_CUDA_ASSERTS "Check device-side post-conditions in the CUDA backend" OFF)

set(JZ_WITH_CUDA OFF)
if(JZ_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # CUDAARCHS (CMake's own variable) picks others, e.g. 90 alone on an H100.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    set(JZ_WITH_CUDA ON)
  endif()
endif()
message(STATUS "jz-tree: CUDA backend ${JZ_WITH_CUDA}")
