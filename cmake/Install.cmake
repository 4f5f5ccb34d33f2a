# `cmake --install`: the ortc compiler, the runtime-only ortc-run, libortc_runtime.so with its
# headers, the backend plugins (lib/ortc/backends/, where the runtime looks for them), a CMake
# package (find_package(ortc) -> ortc::runtime, ortc::backend_abi), a pkg-config file (ortc.pc) and the Python
# package. Three components: "compiler" (ortc), "python" (the Python package) and "runtime" (the
# rest, what a device needs; scripts/pack_runtime).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME runtime)
if(TARGET ortc)
  install(TARGETS ortc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT compiler)
endif()
install(TARGETS ortc-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Both executables need it (tools/cli/openmp_wait_default.cpp), found through their RPATH.
install(TARGETS ortc_openmp_wait LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ortc_runtime_shared EXPORT ortcTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# ortc/status.h lives in base/ (the compiler shares it) but is part of the runtime's public API.
install(FILES runtime/include/ortc/ortc_c.h runtime/include/ortc/runtime.h
  base/include/ortc/status.h runtime/include/ortc/tensor.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ortc)
# The backend plugin ABI: what an out-of-tree backend builds against (ortc::backend_abi).
install(TARGETS ortc_backend_abi EXPORT ortcTargets)
install(FILES schemas/plugin_abi/ortc_backend_plugin.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ortc)
if(TARGET ortc_backend_cuda)
  install(TARGETS ortc_backend_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ortc/backends)
endif()

set(ORTC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ortc)
install(EXPORT ortcTargets NAMESPACE ortc:: DESTINATION ${ORTC_CMAKE_DIR})
configure_package_config_file(cmake/ortcConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ortcConfig.cmake INSTALL_DESTINATION ${ORTC_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ortcConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ortcConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ortcConfigVersion.cmake DESTINATION ${ORTC_CMAKE_DIR})

# The Python bindings (python/README.md): pure Python, one copy for every Python 3 version. In
# <libdir>/python3/site-packages/ortc they find libortc_runtime.so.0 in <libdir> and the command
# in <prefix>/bin; that folder is on no interpreter's default path (PYTHONPATH names it).
install(DIRECTORY python/ortc DESTINATION ${CMAKE_INSTALL_LIBDIR}/python3/site-packages
  COMPONENT python PATTERN __pycache__ EXCLUDE)

configure_file(cmake/ortc.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ortc.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ortc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
