# The io component: URDF models in, libxml2 parsing the XML; flexible-body data files (JSON) through
# jansson. Included by src/CMakeLists.txt, which
# says what the SOADYN_COMPONENT_* lists are. Off (SOADYN_WITH_IO=OFF), the library keeps the
# loaders' symbols and they say "not offered" (not_built.c).
list(APPEND SOADYN_COMPONENT_HEADERS urdf.h mjcf.h io.h)
if(SOADYN_WITH_IO)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(LIBXML2 QUIET IMPORTED_TARGET GLOBAL libxml-2.0)
  endif()
  if(NOT LIBXML2_FOUND)
    message(FATAL_ERROR "SOADYN_WITH_IO needs libxml2 through pkg-config (Debian: apt-get install "
                        "pkg-config libxml2-dev), or configure with -DSOADYN_WITH_IO=OFF")
  endif()
  # Flexible-body data files (JSON, io/flex_file.c) through jansson.
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(JANSSON QUIET IMPORTED_TARGET GLOBAL jansson)
  endif()
  if(NOT JANSSON_FOUND)
    message(FATAL_ERROR "SOADYN_WITH_IO needs jansson through pkg-config (Debian: apt-get install "
                        "libjansson-dev), or configure with -DSOADYN_WITH_IO=OFF")
  endif()
  list(APPEND SOADYN_COMPONENT_SOURCES
    io/urdf.c
    io/urdf_build.c
    io/urdf_loops.c
    io/urdf_flex.c
    io/mjcf_read.c
    io/mjcf_geom.c
    io/mjcf_build.c
    io/model_load.c
    io/io_common.c
    io/xml_read.c
    io/flex_file.c
  )
  list(APPEND SOADYN_COMPONENT_LIBS PkgConfig::LIBXML2 PkgConfig::JANSSON)
  list(APPEND SOADYN_PC_REQUIRES_PRIVATE libxml-2.0 jansson)
else()
  list(APPEND SOADYN_COMPONENT_SOURCES io/not_built.c io/mjcf_not_built.c io/model_load.c io/io_common.c)
endif()

# SDF files (soadyn/sdf.h) through libsdformat 12: io/sdf_reader.cc and io/sdf_build.cc, the library's only C++, compiled
# in an object library of its own (C++17; the C flags and warnings do not apply to it) whose objects
# join the libraries through SOADYN_COMPONENT_OBJECTS. libstdc++ is a private dependency: a C program
# linking the static library gets -lsdformat12 -lignition-math6 -lconsole_bridge -lstdc++ from
# soadyn.pc (Libs.private; not Requires.private, whose Cflags would hand -std=c++17 to a C compiler). Off, or with the io
# component off, sdf_not_built.c answers "not offered in this build".
list(APPEND SOADYN_COMPONENT_HEADERS sdf.h)
if(SOADYN_WITH_IO AND SOADYN_WITH_SDF)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(SDFORMAT QUIET sdformat12)
    pkg_check_modules(CONSOLE_BRIDGE QUIET console_bridge) # urdfdom's console, kept quiet
  endif()
  if(NOT SDFORMAT_FOUND OR NOT CONSOLE_BRIDGE_FOUND)
    message(FATAL_ERROR "SOADYN_WITH_SDF needs libsdformat 12 and console_bridge through pkg-config (Debian: "
                        "apt-get install libsdformat-dev libconsole-bridge-dev), or configure with "
                        "-DSOADYN_WITH_SDF=OFF (SDF files are then refused as not offered in this build)")
  endif()
  add_library(soadyn_sdf_objects OBJECT io/sdf_reader.cc io/sdf_build.cc)
  set_target_properties(soadyn_sdf_objects PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                        VISIBILITY_INLINES_HIDDEN ON CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_include_directories(soadyn_sdf_objects PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                                                        ${CMAKE_CURRENT_SOURCE_DIR})
  target_include_directories(soadyn_sdf_objects SYSTEM PRIVATE ${SDFORMAT_INCLUDE_DIRS} ${CONSOLE_BRIDGE_INCLUDE_DIRS}
                                                               ${LIBXML2_INCLUDE_DIRS})
  target_compile_definitions(soadyn_sdf_objects PRIVATE SOADYN_BUILDING)
  set(sdf_warnings -Wall -Wextra -Wpedantic -Wshadow)
  if(SOADYN_WERROR)
    list(APPEND sdf_warnings -Werror)
  endif()
  target_compile_options(soadyn_sdf_objects PRIVATE ${sdf_warnings})
  if(SOADYN_IPO)
    target_compile_options(soadyn_sdf_objects PRIVATE -ffat-lto-objects)
  endif()
  list(APPEND SOADYN_COMPONENT_OBJECTS $<TARGET_OBJECTS:soadyn_sdf_objects>)
  list(APPEND SOADYN_COMPONENT_LIBS ${SDFORMAT_LINK_LIBRARIES} ${CONSOLE_BRIDGE_LINK_LIBRARIES} stdc++)
  foreach(lib ${SDFORMAT_LIBRARIES} ${CONSOLE_BRIDGE_LIBRARIES})
    list(APPEND SOADYN_PC_LIBS_PRIVATE -l${lib})
  endforeach()
  list(APPEND SOADYN_PC_LIBS_PRIVATE -lstdc++)
  set(SOADYN_HAS_SDF 1)
else()
  list(APPEND SOADYN_COMPONENT_SOURCES io/sdf_not_built.c)
  set(SOADYN_HAS_SDF 0)
endif()
