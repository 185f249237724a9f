# The code generator (soadyn/codegen.h): per-model straight-line C. Writes files, so it is a component
# beside io and sim, not part of the core. Included by src/CMakeLists.txt.
list(APPEND SOADYN_COMPONENT_HEADERS codegen.h)
list(APPEND SOADYN_COMPONENT_SOURCES
  codegen/cg_emit.c
  codegen/cg_spatial.c
  codegen/cg_node_rigid.c
  codegen/cg_node_flexible.c
  codegen/cg_dense.c
  codegen/cg_sweeps.c
  codegen/codegen.c
)
