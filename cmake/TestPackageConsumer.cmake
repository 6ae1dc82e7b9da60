# Installs the build into a scratch prefix, then configures, builds and runs tests/consumer
# against it with find_package(bitparity).
cmake_policy(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE failed OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(failed)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/cmake/consumer -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE failed OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "${out}")
if(failed)
  message(FATAL_ERROR "the consumer program failed")
endif()
