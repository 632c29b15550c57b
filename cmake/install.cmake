# cmake --install: the kcs command, libkcs (static) with its headers, the
# plugin ABI header, pkg-config and CMake package files, contracts, studies
# and the cluster scripts.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(kcs_core PROPERTIES OUTPUT_NAME kcs)
install(TARGETS kcs RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET kcs-worker) # the plugin worker, found next to kcs at run time
  install(TARGETS kcs-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS kcs_core ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
file(GLOB _kcs_headers ${CMAKE_SOURCE_DIR}/src/*.h ${CMAKE_SOURCE_DIR}/backends/backend.h
     ${CMAKE_SOURCE_DIR}/analysis/*.h)
install(FILES ${_kcs_headers} ${CMAKE_BINARY_DIR}/generated/build_info.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kcs)
install(FILES ${CMAKE_SOURCE_DIR}/include/kcs_plugin.h ${CMAKE_SOURCE_DIR}/include/kcs_worker.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/contracts/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/contracts
        FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/studies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/studies)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scripts/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs/slurm
        USE_SOURCE_PERMISSIONS)
install(FILES ${CMAKE_SOURCE_DIR}/analysis/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/kcs OPTIONAL)

# Everything libkcs links, as absolute paths and flags, for consumers that
# link the static library (pkg-config Libs.private, the CMake package).
set(_kcs_link_libs ${BLAS_LIBRARIES} ${MPFR_LIBRARY} ${GMP_LIBRARY} ${HDF5_C_LIBRARIES}
    ${MPI_C_LIBRARIES} ${FYAML_LINK_LIBRARIES} ${XXHASH_LINK_LIBRARIES} ${CMAKE_DL_LIBS} pthread m)
get_property(_kcs_backend_targets GLOBAL PROPERTY KCS_BACKEND_TARGETS)
foreach(t ${_kcs_backend_targets})
  get_target_property(_libs ${t} INTERFACE_LINK_LIBRARIES)
  foreach(l ${_libs})
    if(TARGET ${l})
      get_target_property(_type ${l} TYPE)
      if(_type STREQUAL "INTERFACE_LIBRARY" OR _type STREQUAL "UNKNOWN_LIBRARY" OR _type STREQUAL "SHARED_LIBRARY")
        get_target_property(_loc ${l} IMPORTED_LOCATION)
        if(_loc)
          list(APPEND _kcs_link_libs ${_loc})
        endif()
      endif()
    elseif(l MATCHES "::")
      # an imported target of a backend folder (not visible here): resolve
      # the library file by its name (CUDA::cublas -> libcublas, ...)
      string(REGEX REPLACE ".*::" "" _name "${l}")
      find_library(_kcs_dep_${_name} NAMES ${_name}
                   HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
      if(_kcs_dep_${_name})
        list(APPEND _kcs_link_libs ${_kcs_dep_${_name}})
      endif()
    elseif(l)
      list(APPEND _kcs_link_libs ${l})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _kcs_link_libs)
set(KCS_PC_LIBS_PRIVATE "")
foreach(l ${_kcs_link_libs})
  if(IS_ABSOLUTE ${l})
    string(APPEND KCS_PC_LIBS_PRIVATE " ${l}")
  elseif(l MATCHES "^-")
    string(APPEND KCS_PC_LIBS_PRIVATE " ${l}")
  else()
    string(APPEND KCS_PC_LIBS_PRIVATE " -l${l}")
  endif()
endforeach()
set(KCS_LINK_LIBRARIES_FOR_CONFIG "${_kcs_link_libs}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/kcs.pc.in ${CMAKE_BINARY_DIR}/kcs.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kcs.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/kcsConfig.cmake.in
  ${CMAKE_BINARY_DIR}/kcsConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kcs
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kcsConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kcsConfig.cmake ${CMAKE_BINARY_DIR}/kcsConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kcs)
