# Every test has a TIMEOUT and a label: cpu, gpu, slow (long campaigns, not in the default run)
# or fuzz (time-budgeted searches). A ctest checks this convention (ctest_conventions).
set(BITPARITY_DEFAULT_TIMEOUT 300 CACHE STRING "TIMEOUT in seconds of a test that names none")

# LABEL takes one label or several ("mpi;gpu"): it is a multi-value keyword, so none is dropped.
# The executables of the tests labelled gpu, mpi or nccl, for the target device_test_executables:
# scripts/gpu-check builds only those. ctest cannot say it before a build, since the gtest cases
# (and their labels) are discovered from the built executables.
function(bitparity_note_device_test labels)
  if("${labels}" MATCHES "(^|;)(gpu|mpi|nccl)(;|$)")
    set_property(GLOBAL APPEND PROPERTY BITPARITY_DEVICE_TEST_TARGETS ${ARGN})
  endif()
endfunction()

# bitparity_gtest(target LABEL label... [TIMEOUT seconds] [FILTER gtest-filter]): discovers the gtest
# cases of `target` (those FILTER selects: one executable may hold cases of two labels).
function(bitparity_gtest target)
  cmake_parse_arguments(ARG "" "TIMEOUT;FILTER" "LABEL" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${BITPARITY_DEFAULT_TIMEOUT})
  endif()
  set(filter "")
  if(ARG_FILTER)
    set(filter TEST_FILTER ${ARG_FILTER})
  endif()
  gtest_discover_tests(${target} ${filter} PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT} DISCOVERY_TIMEOUT 60)
  bitparity_note_device_test("${ARG_LABEL}" ${target})
endfunction()

# bitparity_test(name LABEL label [TIMEOUT seconds] COMMAND ...): a plain command as a test.
function(bitparity_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;WORKING_DIRECTORY;SKIP_RETURN_CODE" "LABEL;COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${BITPARITY_DEFAULT_TIMEOUT})
  endif()
  if(NOT ARG_WORKING_DIRECTORY)
    set(ARG_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND} WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
  set(targets "")
  foreach(word IN LISTS ARG_COMMAND)
    if(word MATCHES "\\$<TARGET_FILE:([^>]+)>")
      list(APPEND targets ${CMAKE_MATCH_1})
    endif()
  endforeach()
  bitparity_note_device_test("${ARG_LABEL}" ${targets})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT})
  if(ARG_SKIP_RETURN_CODE)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${ARG_SKIP_RETURN_CODE})
  endif()
endfunction()

# ctest names the JUnit test suite (ctest --output-junit) after the BuildName of this file.
file(WRITE ${PROJECT_BINARY_DIR}/DartConfiguration.tcl "BuildName: bitparity\nSite: bitparity-ci\n")
