# The host layer shared by the backends of backends/kernels (opencl,
# level_zero): call checks and kernel plans (kernels_host.h). Included by
# each of those backends' CMakeLists; the first one processed defines the
# OBJECT library kcs_kernels_host and adds it to KCS_BACKEND_TARGETS (which
# src/CMakeLists.txt links into kcs_core), so its objects are archived into
# libkcs exactly once whichever backends are built. The backends only take
# its include directory (KCS_KH_DIR); they do not link it, so no object of
# it travels with a backend target.
set(KCS_KH_DIR ${CMAKE_SOURCE_DIR}/backends/kernels_host)
if(NOT TARGET kcs_kernels_host)
  add_library(kcs_kernels_host OBJECT ${KCS_KH_DIR}/kh_check.c ${KCS_KH_DIR}/kh_args.c
    ${KCS_KH_DIR}/kh_attn.c)
  target_include_directories(kcs_kernels_host PRIVATE ${KCS_KH_DIR}
    ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(kcs_kernels_host PRIVATE kcs_backend_api)
  target_link_libraries(kcs_kernels_host PUBLIC m)
  set_target_properties(kcs_kernels_host PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set_property(GLOBAL APPEND PROPERTY KCS_BACKEND_TARGETS kcs_kernels_host)
endif()
