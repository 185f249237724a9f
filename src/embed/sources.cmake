# The embed component: closed loops by constraint embedding (soadyn/embed.h; 000 Sec 5, 002 Sec 3).
# Included by src/CMakeLists.txt after the loops component, whose LAPACKE it uses for the pivoted
# split of each aggregate's speeds and the least-squares closure; always built, like loops.
# The geared motor (002 Eq 17) only calls the builder: a core source, beside the builder it extends.
list(APPEND SOADYN_CORE_SOURCES embed/geared_motor.c)
list(APPEND SOADYN_COMPONENT_SOURCES
  embed/embed_model.c
  embed/embed_closure.c
  embed/embed_data.c
  embed/embed_nodes.c
  embed/embed_node_model.c
  embed/embed_forward_dynamics.c
  embed/embed_mass_matrix.c
  embed/embed_mixed.c
  embed/embed_prescribed.c
  embed/embed_projected.c
)
list(APPEND SOADYN_COMPONENT_HEADERS embed.h)
