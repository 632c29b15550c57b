# cmake --install: the kcs command, libkcs (shared) and its backend modules
# (lib/kcs/, installed by kcs_backend_module) with its headers, the
# plugin ABI header, pkg-config and CMake package files, contracts, studies
# and the cluster scripts.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(kcs_core PROPERTIES OUTPUT_NAME kcs)
install(TARGETS kcs RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET kcs-worker) # the plugin worker, found next to kcs at run time
  install(TARGETS kcs-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS kcs_core LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Headers are installed flat into include/kcs/ and included as <kcs/NAME.h>:
# no -I points into that folder, so kcs/error.h cannot shadow glibc's
# <error.h>; the headers include each other with quotes (found next to the
# including file). The stages' headers, less the command's and the
# implementation-private ones (*_impl.h, *_kern.h, contract_load.h).
file(GLOB _kcs_headers ${CMAKE_SOURCE_DIR}/src/*/*.h ${CMAKE_SOURCE_DIR}/backends/backend.h)
list(FILTER _kcs_headers EXCLUDE REGEX "/src/cli/|_impl[.]h$|_kern[.]h$|/contract_load[.]h$")
install(FILES ${_kcs_headers} ${CMAKE_BINARY_DIR}/generated/build_info.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kcs)
install(FILES ${CMAKE_SOURCE_DIR}/include/kcs_plugin.h ${CMAKE_SOURCE_DIR}/include/kcs_worker.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Contracts as folders: share/kcs/contracts/<ID>/ with <ID>.yaml, calibration.yaml
# and README.md (kcs calibrate and grade list the folders), README.md beside them.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/contracts/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/contracts
        FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/studies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/studies)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scripts/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/slurm
        USE_SOURCE_PERMISSIONS)
install(FILES ${CMAKE_SOURCE_DIR}/analysis/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs OPTIONAL)

# libkcs is shared: its own dependencies are its NEEDED entries, so a
# consumer links -lkcs alone. Its headers include <mpi.h>, <hdf5.h> and
# <libfyaml.h>: their include directories go into Cflags (pkg-config); the
# CMake package finds them again on the consumer's machine.
set(KCS_PC_CFLAGS "")
foreach(d ${MPI_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS} ${FYAML_INCLUDE_DIRS})
  if(NOT d STREQUAL "/usr/include")
    string(APPEND KCS_PC_CFLAGS " -I${d}")
  endif()
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/cmake/kcs.pc.in ${CMAKE_BINARY_DIR}/kcs.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kcs.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/kcsConfig.cmake.in
  ${CMAKE_BINARY_DIR}/kcsConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kcs
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kcsConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kcsConfig.cmake ${CMAKE_BINARY_DIR}/kcsConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kcs)
