# cmake --install: the kcs command, its libraries and backend modules
# (lib/kcs/, installed by kcs_backend_module), the public headers, pkg-config
# and CMake package files, contracts, studies and the cluster scripts.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Two libraries: libkcs (kcs_public), the installed API for other programs
# (include/kcs/: the plugin ABI, the worker protocol, reading a dataset;
# exports listed in cmake/libkcs.map), and libkcs_private (kcs_core), every
# stage's objects for the kcs command, the worker and the backend modules,
# with no headers installed: its functions are not an API.
set_target_properties(kcs_core PROPERTIES OUTPUT_NAME kcs_private)
install(TARGETS kcs RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET kcs-worker) # the plugin worker, found next to kcs at run time
  install(TARGETS kcs-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS kcs_core kcs_public LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/kcs_plugin.h ${CMAKE_SOURCE_DIR}/include/kcs_worker.h
        ${CMAKE_SOURCE_DIR}/include/kcs_dataset.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kcs)
# Contracts as folders: share/kcs/contracts/<ID>/ with <ID>.yaml, calibration.yaml
# and README.md (kcs calibrate and grade list the folders), README.md beside them.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/contracts/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/contracts
        FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/studies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/studies)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scripts/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/slurm
        USE_SOURCE_PERMISSIONS)
install(FILES ${CMAKE_SOURCE_DIR}/analysis/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs OPTIONAL)

# libkcs is shared: its own dependencies are its NEEDED entries, so a
# consumer links -lkcs alone, and its headers include only the C library's.
configure_file(${CMAKE_SOURCE_DIR}/cmake/kcs.pc.in ${CMAKE_BINARY_DIR}/kcs.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kcs.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/kcsConfig.cmake.in
  ${CMAKE_BINARY_DIR}/kcsConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kcs
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kcsConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kcsConfig.cmake ${CMAKE_BINARY_DIR}/kcsConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kcs)
