# The public library, amarena (alias amarena::amarena): the objects of the
# internal libraries in one archive, or in one shared library with a versioned
# SONAME when BUILD_SHARED_LIBS is ON. Its interface is include/ alone (the C
# API, amarena/amarena.h, and the C++17 wrapper, amarena/amarena.hpp); the
# source tree, C++20 and the internal headers stay with the internal targets.

include(GNUInstallDirs)

set(amarena_internal_libs amarena_core amarena_search amarena_jit amarena_runtime)

# What the objects need at link time: the internal libraries' own link
# dependencies (so one added there reaches the public library too), less
# xbyak, which is header-only. A shared libamarena links these itself; a static
# one passes them on to whoever links it (install.cmake turns them into
# amarenaConfig.cmake's find_dependency calls and amarena.pc's entries).
set(amarena_link_deps)
foreach(lib IN LISTS amarena_internal_libs)
  get_target_property(deps ${lib} LINK_LIBRARIES)
  foreach(dep IN LISTS deps)
    if(NOT dep IN_LIST amarena_internal_libs AND NOT dep STREQUAL "xbyak::xbyak")
      list(APPEND amarena_link_deps ${dep})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES amarena_link_deps)

set(amarena_objects)
foreach(lib IN LISTS amarena_internal_libs)
  list(APPEND amarena_objects $<TARGET_OBJECTS:${lib}>)
endforeach()
add_library(amarena ${amarena_objects})
add_library(amarena::amarena ALIAS amarena)
target_link_libraries(amarena PRIVATE ${amarena_link_deps})
target_include_directories(amarena PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(amarena PROPERTIES
  LINKER_LANGUAGE CXX
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

get_target_property(amarena_type amarena TYPE)
if(amarena_type STREQUAL "STATIC_LIBRARY")
  # A C project links with the C driver, which leaves out the C++ runtime the
  # archive needs (a project that enables CXX links with the C++ driver).
  target_link_libraries(amarena INTERFACE $<$<LINK_LANGUAGE:C>:stdc++>)
endif()
if(amarena_type STREQUAL "SHARED_LIBRARY")
  # Hidden visibility already keeps the C++ internals out of the dynamic
  # symbol table; the version script also drops what headers mark default
  # (e.g. libstdc++ template instances), and --exclude-libs keeps any static
  # archive's symbols (a static absl, say) local. -z nodelete: the library
  # owns threads (the thread pool, background searches) and thread-local
  # state, so a dlclose of whatever loaded it must not unmap its code under
  # them; it stays until the process exits.
  set(amarena_exports ${PROJECT_SOURCE_DIR}/cmake/amarena.map)
  target_link_options(amarena PRIVATE -Wl,--exclude-libs,ALL
                      -Wl,--version-script=${amarena_exports} -Wl,--no-undefined
                      -Wl,-z,nodelete)
  set_property(TARGET amarena APPEND PROPERTY LINK_DEPENDS ${amarena_exports})
endif()
