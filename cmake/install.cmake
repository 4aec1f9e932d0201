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
# config file finds their packages (a shared one needs none of them found),
# and amarena.pc names them for `pkg-config --static`.
if(amarena_type STREQUAL "STATIC_LIBRARY")
  set(AMARENA_STATIC 1)
else()
  set(AMARENA_STATIC 0)
endif()
set(amarena_packages)
set(amarena_pc_requires)
set(AMARENA_PC_LIBS_PRIVATE)
foreach(dep IN LISTS amarena_link_deps)
  if(dep MATCHES "^absl::(.+)$")
    list(APPEND amarena_packages absl)
    list(APPEND amarena_pc_requires absl_${CMAKE_MATCH_1})
  elseif(dep STREQUAL "SQLite::SQLite3")
    list(APPEND amarena_packages SQLite3)
    list(APPEND amarena_pc_requires sqlite3)
  elseif(dep STREQUAL "Threads::Threads")
    list(APPEND amarena_packages Threads)
    string(APPEND AMARENA_PC_LIBS_PRIVATE " -pthread")
  elseif(dep STREQUAL "Zydis::Zydis")
    list(APPEND amarena_packages zydis)
    string(APPEND AMARENA_PC_LIBS_PRIVATE " -lZydis")
  elseif(dep MATCHES "^[A-Za-z0-9_]+$")  # a plain library name
    string(APPEND AMARENA_PC_LIBS_PRIVATE " -l${dep}")
  else()
    message(FATAL_ERROR "cmake/install.cmake does not know how a consumer finds "
            "'${dep}' (a link dependency of the library): add it there")
  endif()
endforeach()
list(REMOVE_DUPLICATES amarena_packages)
set(AMARENA_FIND_DEPENDENCIES)
foreach(pkg IN LISTS amarena_packages)
  string(APPEND AMARENA_FIND_DEPENDENCIES "  find_dependency(${pkg})\n")
endforeach()
list(JOIN amarena_pc_requires " " AMARENA_PC_REQUIRES_PRIVATE)
string(APPEND AMARENA_PC_LIBS_PRIVATE " -lstdc++ -lm")
string(STRIP "${AMARENA_PC_LIBS_PRIVATE}" AMARENA_PC_LIBS_PRIVATE)
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
configure_file(${PROJECT_SOURCE_DIR}/cmake/amarena.pc.in
               ${PROJECT_BINARY_DIR}/amarena.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/amarena.pc DESTINATION ${amarena_pc_dir})
