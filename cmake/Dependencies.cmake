# Every third-party dependency of ortc, found on the system. One place to see what we use.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)          # targets: onnx, onnx_proto (libonnx-dev)
find_package(CLI11 CONFIG REQUIRED)
if(ORTC_BUILD_COMPILER)
  find_package(spdlog CONFIG REQUIRED)  # the compiler's -v logging; the runtime has none
endif()
find_package(nlohmann_json CONFIG REQUIRED)
find_package(Threads REQUIRED)
# The CPU runtime's intra-op threads are OpenMP's, the runtime oneDNN (libdnnl-dev) uses too, so
# our loops and oneDNN's primitives share one pool of workers.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(DNNL_LIBRARY dnnl REQUIRED)
add_library(dnnl::dnnl UNKNOWN IMPORTED)
set_target_properties(dnnl::dnnl PROPERTIES IMPORTED_LOCATION ${DNNL_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${DNNL_INCLUDE_DIR})
# OpenBLAS: the CPU kernels' GEMMs; the runtime sets its thread count with the session's.
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread
  /usr/include/aarch64-linux-gnu/openblas-pthread /usr/include/openblas NO_DEFAULT_PATH)
if(NOT OPENBLAS_INCLUDE_DIR)
  find_path(OPENBLAS_INCLUDE_DIR cblas.h REQUIRED)
endif()
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(xxhash::xxhash UNKNOWN IMPORTED)
set_target_properties(xxhash::xxhash PROPERTIES IMPORTED_LOCATION ${XXHASH_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${XXHASH_INCLUDE_DIR})

# The CUDA toolkit is optional: without it the CUDA backend's compile-side capability table is
# still built (it needs no CUDA headers), only the parts that call the toolkit are left out.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  message(STATUS "ortc: CUDA toolkit ${CUDAToolkit_VERSION} found")
else()
  message(STATUS "ortc: CUDA toolkit not found; CUDA backend limited to its capability table")
endif()

if(ORTC_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
endif()
