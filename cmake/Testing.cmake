# Every test has a TIMEOUT and a label: cpu, gpu, slow (long campaigns, not in the default run)
# or fuzz (time-budgeted searches). A ctest checks this convention (ctest_conventions).
set(BITPARITY_DEFAULT_TIMEOUT 300 CACHE STRING "TIMEOUT in seconds of a test that names none")

# LABEL takes one label or several ("mpi;gpu"): it is a multi-value keyword, so none is dropped.
# bitparity_gtest(target LABEL label... [TIMEOUT seconds]): discovers the gtest cases of `target`.
function(bitparity_gtest target)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABEL" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${BITPARITY_DEFAULT_TIMEOUT})
  endif()
  gtest_discover_tests(${target} PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT} DISCOVERY_TIMEOUT 60)
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
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABEL}" TIMEOUT ${ARG_TIMEOUT})
  if(ARG_SKIP_RETURN_CODE)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${ARG_SKIP_RETURN_CODE})
  endif()
endfunction()

# ctest names the JUnit test suite (ctest --output-junit) after the BuildName of this file.
file(WRITE ${PROJECT_BINARY_DIR}/DartConfiguration.tcl "BuildName: bitparity\nSite: bitparity-ci\n")
