# Distribution packages (installed by scripts/install-deps). BITPARITY_DEPS_PREFIX points at an
# unpacked prefix (the GPU machine, which has no package registry); CMAKE_PREFIX_PATH covers it.
find_package(Threads REQUIRED)
find_package(GTest REQUIRED)
find_package(rapidcheck CONFIG REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(Boost 1.74 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(benchmark REQUIRED)
find_path(MPFR_INCLUDE_DIR mpfr.h REQUIRED)
find_library(MPFR_LIBRARY mpfr REQUIRED)
find_library(GMP_LIBRARY gmp REQUIRED)
# Debian puts gmp.h under include/x86_64-linux-gnu: found there in an unpacked prefix too.
find_path(GMP_INCLUDE_DIR gmp.h PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu REQUIRED)
add_library(bitparity_mpfr INTERFACE)
target_include_directories(bitparity_mpfr INTERFACE ${MPFR_INCLUDE_DIR} ${GMP_INCLUDE_DIR})
target_link_libraries(bitparity_mpfr INTERFACE ${MPFR_LIBRARY} ${GMP_LIBRARY})
include(GoogleTest)
include(${CMAKE_CURRENT_LIST_DIR}/Testing.cmake)
# Open MPI (scripts/install-deps) launches and connects the ranks of distributed/. A machine
# without it (the GPU machine's bare prefix) builds everything else; `bitparity sharded` then
# says that it was built without MPI.
find_package(MPI COMPONENTS CXX)
