# Install rules and a package config: a consumer project does
#   find_package(bitparity REQUIRED)
#   target_link_libraries(x bitparity::kernels bitparity::properties)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(bitparity_exported bitparity_numerics bitparity_mpfr bitparity_kernel_types bitparity_kernels bitparity_reference bitparity_fixtures
    bitparity_properties bitparity_reports)
set(BITPARITY_HAVE_MPI 0)
if(TARGET bitparity_distributed)
  list(APPEND bitparity_exported bitparity_distributed)
  set(BITPARITY_HAVE_MPI 1)
endif()
foreach(target ${bitparity_exported})
  string(REPLACE "bitparity_" "" short ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${short})
endforeach()
install(TARGETS ${bitparity_exported} EXPORT bitparityTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS bitparity RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(folder kernels reference fixtures properties distributed reports)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT bitparityTargets NAMESPACE bitparity:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bitparity)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/bitparityConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/bitparityConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bitparity)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/bitparityConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/bitparityConfig.cmake ${PROJECT_BINARY_DIR}/bitparityConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bitparity)

# A consumer project builds against an installed copy and runs a step and a property.
bitparity_test(package_consumer_builds_and_runs LABEL cpu TIMEOUT 600
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DWORK_DIR=${PROJECT_BINARY_DIR}/package-consumer -P ${PROJECT_SOURCE_DIR}/cmake/TestPackageConsumer.cmake)
