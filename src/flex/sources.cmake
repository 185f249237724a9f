# The flex component's LAPACK half: where flexible models come from (the uniform beam's eigenproblem,
# src/flex/beam.c), the natural frequencies, a body's and the model's system modes (frequencies.c),
# beside the owned data object they fill (flex_data.c). Included by
# src/CMakeLists.txt after the loops component, which has found LAPACKE already (Debian
# liblapacke-dev); always built, like the loops component. The JSON data
# file reader is in the io component (src/io/flex_file.c); the node operations are core sources.
list(APPEND SOADYN_COMPONENT_SOURCES
  flex/flex_data.c
  flex/beam.c
  flex/frequencies.c
  flex/deflection.c
  flex/flex_params.c
)
list(APPEND SOADYN_COMPONENT_HEADERS flex.h params.h) # params.h: the modal setters (flex_params.c) need LAPACK
