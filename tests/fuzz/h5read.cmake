# fuzz_h5read: the libFuzzer target of the HDF5 reader of kcs reduce
# (tests/fuzz/fuzz_h5read.c; cmake --build build --target kcs_fuzz_h5read),
# and the ctest test fuzz.h5read_bounded that runs it for KCS_FUZZ_TIME
# (60) s and fails on any finding (crash, sanitizer report, leak,
# timeout, out-of-memory). Included from tests/fuzz/CMakeLists.txt:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/h5read.cmake)
# libFuzzer needs clang, which need not be the project's compiler, so the
# target is one clang command (custom command) compiling the reader's own
# sources with -fsanitize=fuzzer,address,undefined; nothing is built when
# no clang with a working libFuzzer runtime is found.
if(KCS_FUZZ_CC) # chosen (and probed) by tests/fuzz/CMakeLists.txt
  set(KCS_FUZZ_CLANG ${KCS_FUZZ_CC})
else()
  find_program(KCS_FUZZ_CLANG NAMES clang-14 clang DOC "clang with libFuzzer, for fuzz_h5read")
endif()
if(NOT KCS_FUZZ_CLANG)
  message(STATUS "fuzz_h5read: no clang found, not built")
  return()
endif()

set(_h5f_flags -std=c17 -D_POSIX_C_SOURCE=200809L -g -O1
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
               -fno-omit-frame-pointer)
set(_h5f_probe_dir ${CMAKE_CURRENT_BINARY_DIR}/h5read_probe)
file(MAKE_DIRECTORY ${_h5f_probe_dir})
file(WRITE ${_h5f_probe_dir}/probe.c
     "int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{\n    (void)d;\n    (void)n;\n    return 0;\n}\n")
execute_process(COMMAND ${KCS_FUZZ_CLANG} ${_h5f_flags} probe.c -o probe
                WORKING_DIRECTORY ${_h5f_probe_dir} RESULT_VARIABLE _h5f_probe_rc
                OUTPUT_QUIET ERROR_QUIET)
if(NOT _h5f_probe_rc EQUAL 0)
  message(STATUS "fuzz_h5read: ${KCS_FUZZ_CLANG} cannot link -fsanitize=fuzzer "
                 "(libclang-rt missing?), not built")
  return()
endif()

set(_h5f_dir ${CMAKE_CURRENT_LIST_DIR})
set(_h5f_sources
    ${_h5f_dir}/fuzz_h5read.c ${_h5f_dir}/h5read_recipe.c ${_h5f_dir}/h5read_tables.c
    ${CMAKE_SOURCE_DIR}/src/store/store_read.c ${CMAKE_SOURCE_DIR}/src/store/store_h5.c
    ${CMAKE_SOURCE_DIR}/src/store/store_vlen.c
    ${CMAKE_SOURCE_DIR}/src/store/store_types.c ${CMAKE_SOURCE_DIR}/src/base/error.c
    ${CMAKE_SOURCE_DIR}/src/store/store_digest.c ${CMAKE_SOURCE_DIR}/src/store/store_validate.c
    ${CMAKE_SOURCE_DIR}/src/store/store_status.c ${CMAKE_SOURCE_DIR}/src/arith/op.c
    ${CMAKE_SOURCE_DIR}/src/arith/format.c ${CMAKE_SOURCE_DIR}/src/arith/format_fast.c
    ${CMAKE_SOURCE_DIR}/src/lang/dist_names.c)
file(GLOB _h5f_headers CONFIGURE_DEPENDS ${_h5f_dir}/h5read_*.h ${CMAKE_SOURCE_DIR}/src/*/*.h
     ${CMAKE_SOURCE_DIR}/backends/backend.h)
set(_h5f_includes)
foreach(d ${CMAKE_SOURCE_DIR}/src/base ${CMAKE_SOURCE_DIR}/src/arith ${CMAKE_SOURCE_DIR}/src/lang
          ${CMAKE_SOURCE_DIR}/src/plan ${CMAKE_SOURCE_DIR}/src/store ${CMAKE_SOURCE_DIR}/include
          ${CMAKE_BINARY_DIR}/generated
          ${HDF5_INCLUDE_DIRS} ${MPI_C_INCLUDE_DIRS})
  list(APPEND _h5f_includes -I${d})
endforeach()
set(_h5f_out ${CMAKE_CURRENT_BINARY_DIR}/fuzz_h5read)
add_custom_command(
  OUTPUT ${_h5f_out}
  COMMAND ${KCS_FUZZ_CLANG} ${_h5f_flags} -Wall -Wextra -Werror ${HDF5_DEFINITIONS}
          ${_h5f_includes} ${_h5f_sources} ${HDF5_C_LIBRARIES} ${MPI_C_LIBRARIES} -lxxhash -lm
          -o ${_h5f_out}
  DEPENDS ${_h5f_sources} ${_h5f_headers}
  COMMENT "Building the libFuzzer target fuzz_h5read with ${KCS_FUZZ_CLANG}"
  COMMAND_EXPAND_LISTS VERBATIM)
add_custom_target(kcs_fuzz_h5read ALL DEPENDS ${_h5f_out})

# KCS_FUZZ_TIME (60) s from the seed corpus; new inputs go to a scratch
# corpus in the build tree, a failing input to h5read-crash-* (etc.) next to it.
if(NOT KCS_FUZZ_TIME) # set by tests/fuzz/CMakeLists.txt
  set(KCS_FUZZ_TIME 60)
endif()
math(EXPR _h5f_limit "${KCS_FUZZ_TIME} + 180")
set(_h5f_work ${CMAKE_CURRENT_BINARY_DIR}/corpus_h5read_work)
file(MAKE_DIRECTORY ${_h5f_work})
add_test(NAME fuzz.h5read_bounded
         COMMAND ${_h5f_out} -max_total_time=${KCS_FUZZ_TIME} -rss_limit_mb=2048 -timeout=10
                 -max_len=256 -print_final_stats=1
                 -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/h5read-
                 ${_h5f_work} ${_h5f_dir}/corpus_h5read
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(fuzz.h5read_bounded PROPERTIES TIMEOUT ${_h5f_limit} LABELS fuzz)
message(STATUS "fuzz_h5read: built with ${KCS_FUZZ_CLANG}; "
               "ctest -R fuzz.h5read_bounded runs it ${KCS_FUZZ_TIME} s")
