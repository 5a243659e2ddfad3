# The CUDA backend: kernel/cuda/ (plain CUDA, no XLA) and the
# _silu_grad_cuda extension module (ffi/cuda/) with the "CUDA" FFI handler.
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR "JAX_ASCEND_SILU_CUDA=ON but no CUDA compiler was found: put nvcc on PATH, "
                      "or set CUDACXX / CMAKE_CUDA_COMPILER.")
endif()
# sm_90 machine code (H100/H200) plus compute_90 PTX, which newer GPUs compile
# at load time. Override with -DCMAKE_CUDA_ARCHITECTURES=... (or CUDAARCHS).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
message(STATUS "CUDA backend: nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")

add_library(jas_kernel_cuda STATIC kernel/cuda/silu_grad_cuda.cu kernel/cuda/swiglu_grad_cuda.cu
                                   kernel/cuda/plan.cc)
# The static runtime keeps the module independent of whichever libcudart
# jax's CUDA plugin brings; only the driver (libcuda) is needed at run time.
target_link_libraries(jas_kernel_cuda PUBLIC jas_kernel_common CUDA::cudart_static)
set_target_properties(jas_kernel_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON)
# Same IEEE operations as the CPU ISAs: no fused multiply-adds the source does
# not ask for (the device ops are explicitly rounded intrinsics anyway).
target_compile_options(jas_kernel_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)

if(JAX_ASCEND_SILU_PYTHON)
  nanobind_add_module(_silu_grad_cuda STABLE_ABI NB_STATIC ffi/cuda/module.cc ffi/cuda/handler.cc)
  target_link_libraries(_silu_grad_cuda PRIVATE jas_ffi jas_kernel_cuda)
  target_compile_definitions(_silu_grad_cuda PRIVATE JAS_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES}")
  install(TARGETS _silu_grad_cuda LIBRARY DESTINATION jax_ascend_silu)
  jas_add_stub(_silu_grad_cuda)
endif()
