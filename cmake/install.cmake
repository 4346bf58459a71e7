# Install rules, the CMake package for other projects (find_package(modelstat))
# and the Debian package (cpack -G DEB). Included by the top-level CMakeLists.
#
# Layout under the prefix:
#   bin/modelstat                          the command line
#   libexec/modelstat/modelstat-profiler   its LibTorch half, found relative to bin/modelstat
#   include/modelstat/*.hpp                the public API (no protobuf, ONNX or LibTorch headers)
#   lib/libmodelstat_*.a                   the libraries
#   lib/cmake/modelstat/                   modelstatConfig.cmake and the exported targets
#   lib/python3/dist-packages/modelstat/   the Python module (Debian's /usr/bin/python3 reads it under /usr)
#   share/man/man1/modelstat.1, share/bash-completion/completions/modelstat, share/doc/modelstat/
include(CMakePackageConfigHelpers)

set(MODELSTAT_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/modelstat)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/modelstat DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")

# The analyzer side (no LibTorch): modelstat::analyzer, stats, measurements, fit.
foreach(lib analyzer stats measurements fit)
  set_target_properties(modelstat_${lib} PROPERTIES EXPORT_NAME ${lib})
endforeach()
install(TARGETS modelstat_analyzer modelstat_stats modelstat_measurements modelstat_fit
        EXPORT modelstatAnalyzerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT modelstatAnalyzerTargets NAMESPACE modelstat:: FILE modelstatAnalyzerTargets.cmake
        DESTINATION ${MODELSTAT_CMAKE_INSTALL_DIR})
# The profiler (LibTorch): modelstat::profiler, in its own export set so that a
# project using only the analyzer never needs LibTorch.
if(MODELSTAT_WITH_TORCH)
  set_target_properties(modelstat_profiler PROPERTIES EXPORT_NAME profiler)
  install(TARGETS modelstat_profiler EXPORT modelstatProfilerTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT modelstatProfilerTargets NAMESPACE modelstat:: FILE modelstatProfilerTargets.cmake
          DESTINATION ${MODELSTAT_CMAKE_INSTALL_DIR})
endif()

set(MODELSTAT_CONFIG_WITH_PROFILER ${MODELSTAT_WITH_TORCH})
set(MODELSTAT_CONFIG_WITH_CUDA ${MODELSTAT_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/modelstatConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/modelstatConfig.cmake
                              INSTALL_DESTINATION ${MODELSTAT_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/modelstatConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/modelstatConfig.cmake ${PROJECT_BINARY_DIR}/modelstatConfigVersion.cmake
        DESTINATION ${MODELSTAT_CMAKE_INSTALL_DIR})

# Man page and bash completion, generated from the built binaries.
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/modelstat.1 ${PROJECT_BINARY_DIR}/modelstat.bash
  COMMAND ${CMAKE_COMMAND} -DMODELSTAT=$<TARGET_FILE:modelstat> -DVERSION=${PROJECT_VERSION}
          -DOUT_DIR=${PROJECT_BINARY_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/gen_cli_docs.cmake
  DEPENDS modelstat $<$<BOOL:${MODELSTAT_WITH_TORCH}>:modelstat-profiler> ${PROJECT_SOURCE_DIR}/cmake/gen_cli_docs.cmake
  COMMENT "Generating the man page and bash completion from --help")
add_custom_target(modelstat_cli_docs ALL DEPENDS ${PROJECT_BINARY_DIR}/modelstat.1 ${PROJECT_BINARY_DIR}/modelstat.bash)
install(FILES ${PROJECT_BINARY_DIR}/modelstat.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/modelstat.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME modelstat)

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        PATTERN "examples" EXCLUDE PATTERN "*.png" EXCLUDE)

# cpack -G DEB: one package, installed under /usr. Its dependencies are the
# Debian packages of the shared libraries the binaries and the Python module
# load (checked with dpkg -S on Debian 12); the -dev packages find_package
# needs for linking against modelstat are suggested.
set(CPACK_PACKAGE_NAME modelstat)
set(CPACK_PACKAGE_VENDOR "modelstat")
set(CPACK_PACKAGE_CONTACT "modelstat maintainers <modelstat@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "what a neural network costs (params, MACs, FLOPs, memory) and where its time goes")
set(CPACK_PACKAGE_DESCRIPTION
    "Static analysis of ONNX models (params, MACs, FLOPs, bytes, peak memory) and per-layer profiling with LibTorch; command line, C++ libraries with a CMake package, and a Python module.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(_deb_depends "libc6, libstdc++6, libgcc-s1, libonnx1, libprotobuf32, libfmt9, libyaml-cpp0.7, libsqlite3-0")
if(MODELSTAT_WITH_TORCH)
  string(APPEND _deb_depends ", libtorch1.13, libopenblas0-pthread | libopenblas0")
  if(MODELSTAT_DNNL_LIBRARY)
    string(APPEND _deb_depends ", libdnnl2")
  endif()
endif()
if(MODELSTAT_PYTHON_MODULE)
  # The extension modules are built for this Python's ABI (cpython-3XY).
  math(EXPR _python_next_minor "${Python_VERSION_MINOR} + 1")
  string(APPEND _deb_depends ", python3 (>= ${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}), "
         "python3 (<< ${Python_VERSION_MAJOR}.${_python_next_minor})")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_deb_depends}")
# What more a user may want: DataFrames and from_torch in Python; the -dev
# packages find_package(modelstat) needs to link against the libraries.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "python3-pandas, python3-torch, libonnx-dev, libprotobuf-dev, libfmt-dev, nlohmann-json3-dev, libtorch-dev, slurm-client")
include(CPack)
