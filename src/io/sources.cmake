# The io component: URDF models in, libxml2 parsing the XML; flexible-body data files (JSON) through
# jansson. Included by src/CMakeLists.txt, which
# says what the SOADYN_COMPONENT_* lists are. Off (SOADYN_WITH_IO=OFF), the library keeps the
# loaders' symbols and they say "not offered" (not_built.c).
list(APPEND SOADYN_COMPONENT_HEADERS urdf.h)
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
    io/io_common.c
    io/xml_read.c
    io/flex_file.c
  )
  list(APPEND SOADYN_COMPONENT_LIBS PkgConfig::LIBXML2 PkgConfig::JANSSON)
  list(APPEND SOADYN_PC_REQUIRES_PRIVATE libxml-2.0 jansson)
else()
  list(APPEND SOADYN_COMPONENT_SOURCES io/not_built.c)
endif()

# SDF files (soadyn/sdf.h) through libsdformat 12. Until the reader is in, every build answers
# "not offered" (sdf_not_built.c).
list(APPEND SOADYN_COMPONENT_HEADERS sdf.h)
list(APPEND SOADYN_COMPONENT_SOURCES io/sdf_not_built.c)
set(SOADYN_HAS_SDF 0)
