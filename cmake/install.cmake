# Installs libamarena, include/amarena/, the CMake package (amarenaConfig.cmake
# exporting amarena::amarena) and amarena.pc. All paths are relative to the
# install prefix, so `cmake --install build --prefix DIR` works for any DIR.
include(CMakePackageConfigHelpers)

set(AMARENA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/amarena)

install(TARGETS amarena EXPORT amarenaTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/amarena
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT amarenaTargets NAMESPACE amarena::
        FILE amarenaTargets.cmake DESTINATION ${AMARENA_CMAKE_DIR})

# A static libamarena carries its link dependencies to the consumer: the
# config file finds them (a shared one needs none of them found).
if(amarena_type STREQUAL "STATIC_LIBRARY")
  set(AMARENA_STATIC 1)
else()
  set(AMARENA_STATIC 0)
endif()
if(TARGET Zydis::Zydis)
  set(AMARENA_WITH_ZYDIS 1)
else()
  set(AMARENA_WITH_ZYDIS 0)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/amarenaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/amarenaConfig.cmake
  INSTALL_DESTINATION ${AMARENA_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/amarenaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/amarenaConfig.cmake
              ${PROJECT_BINARY_DIR}/amarenaConfigVersion.cmake
        DESTINATION ${AMARENA_CMAKE_DIR})

# amarena.pc: the prefix is found from the .pc file's own place.
set(amarena_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH AMARENA_PC_TO_PREFIX /${amarena_pc_dir} /)
string(REGEX REPLACE "/$" "" AMARENA_PC_TO_PREFIX "${AMARENA_PC_TO_PREFIX}")
set(AMARENA_PC_LIBS_PRIVATE "-lpthreadpool")
if(AMARENA_WITH_ZYDIS)
  string(APPEND AMARENA_PC_LIBS_PRIVATE " -lZydis")
endif()
string(APPEND AMARENA_PC_LIBS_PRIVATE " -pthread -lstdc++ -lm")
configure_file(${PROJECT_SOURCE_DIR}/cmake/amarena.pc.in
               ${PROJECT_BINARY_DIR}/amarena.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/amarena.pc DESTINATION ${amarena_pc_dir})
