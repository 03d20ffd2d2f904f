# Compiler warnings for every target of ours, included by the top-level
# CMakeLists.txt and by Kernels/CMakeLists.txt (standalone builds).
#
# -Wall -Wextra on C++ and on the CUDA host code. VTK, ParaView and Qt come
# in as imported targets, so their headers are system headers and warn about
# nothing. JZ_WARNINGS_AS_ERRORS turns warnings into errors: CI sets it
# (.ci/run), so that a user's newer compiler with a new warning still builds.
include_guard(GLOBAL)

option(JZ_WARNINGS_AS_ERRORS "Turn compiler warnings into errors (set by CI)" OFF)

set(JZ_CXX_WARNINGS -Wall -Wextra)
set(JZ_CUDA_WARNINGS -Xcompiler=-Wall,-Wextra)
if(JZ_WARNINGS_AS_ERRORS)
  list(APPEND JZ_CXX_WARNINGS -Werror)
  list(APPEND JZ_CUDA_WARNINGS -Xcompiler=-Werror --Werror=all-warnings)
endif()
# One generator expression per flag: a list inside one would be split apart
# wherever the list is expanded (add_compile_options, vtk_module_compile_options).
set(JZ_WARNINGS)
foreach(flag IN LISTS JZ_CXX_WARNINGS)
  list(APPEND JZ_WARNINGS "$<$<COMPILE_LANGUAGE:CXX>:${flag}>")
endforeach()
foreach(flag IN LISTS JZ_CUDA_WARNINGS)
  list(APPEND JZ_WARNINGS "$<$<COMPILE_LANGUAGE:CUDA>:${flag}>")
endforeach()
