# The io layer: URDF models in (libxml2 parses the XML).
set(SOADYN_IO_SOURCES
  io/urdf.c
  io/urdf_build.c
)
set(SOADYN_IO_LIBS PkgConfig::LIBXML2)
