# Tests of the embed component (constraint embedding, soadyn/embed.h; issue 11). Included by
# tests/CMakeLists.txt; paths relative to tests/. Tests that read ../shared carry "shared_models"
# and skip (77) when it is absent; the 10 s simulation of Cassie carries "embed_long".
soadyn_add_test(test_embed_forward_dynamics SOURCES embed/test_embed_forward_dynamics.c loops/random_loops.c
                random_tree.c LABELS unit ARGS ${PROJECT_SOURCE_DIR}/models)
soadyn_add_test(test_embed_model SOURCES embed/test_embed_model.c loops/random_loops.c random_tree.c LABELS unit
                ARGS ${PROJECT_SOURCE_DIR}/models)
soadyn_add_test(test_embed_mechanisms SOURCES embed/test_embed_mechanisms.c loops/random_loops.c random_tree.c
                LABELS unit ARGS ${PROJECT_SOURCE_DIR}/models)
soadyn_add_test(test_embed_errors SOURCES embed/test_embed_errors.c LABELS unit)
soadyn_add_test(test_embed_cassie SOURCES embed/test_embed_cassie.c loops/random_loops.c random_tree.c
                LABELS shared_models ARGS ${SOADYN_SHARED_MODELS})
soadyn_add_test(test_embed_mixed SOURCES embed/test_embed_mixed.c loops/random_loops.c random_tree.c LABELS unit)
soadyn_add_test(test_geared_motor SOURCES embed/test_geared_motor.c random_tree.c LABELS unit)
soadyn_add_test(test_embed_simulation SOURCES embed/test_embed_simulation.c LABELS unit
                ARGS four_bar ${PROJECT_SOURCE_DIR}/models)
add_test(NAME test_embed_simulation_cassie COMMAND test_embed_simulation cassie ${SOADYN_SHARED_MODELS})
set_tests_properties(test_embed_simulation_cassie PROPERTIES SKIP_RETURN_CODE 77 LABELS "shared_models;embed_long")
soadyn_add_test(test_embed_mass_matrix SOURCES embed/test_embed_mass_matrix.c loops/random_loops.c random_tree.c
                LABELS unit ARGS ${PROJECT_SOURCE_DIR}/models)
if(SOADYN_WITH_SDF)
  soadyn_add_test(test_embed_cassie_sdf SOURCES embed/test_embed_cassie_sdf.c loops/random_loops.c random_tree.c
                  LABELS shared_models ARGS ${SOADYN_SHARED_MODELS})
endif()
# The embedded inverse dynamics with tree-augmented constraints beside (dense reference).
soadyn_add_test(test_embed_inverse_mixed SOURCES embed/test_embed_inverse_mixed.c loops/random_loops.c random_tree.c
                LABELS "unit;embed")
# Prescribed speeds in the embedded forward dynamics, against the tree-augmented layer.
soadyn_add_test(test_embed_prescribed SOURCES embed/test_embed_prescribed.c loops/random_loops.c random_tree.c
                LABELS "unit;embed")
# Flexible bodies outside the aggregates: embedded = tree-augmented, 10 s closed without projection.
soadyn_add_test(test_embed_flexible SOURCES embed/test_embed_flexible.c LABELS "unit;embed"
                ARGS ${PROJECT_SOURCE_DIR}/models)
# A flexible body inside an embedded loop (flexible_four_bar's coupler and random variants):
# embedded = tree-augmented, 10 s closed without projection, the out-of-plane case refused.
soadyn_add_test(test_embed_flexible_member SOURCES embed/test_embed_flexible_member.c LABELS "unit;embed"
                ARGS ${PROJECT_SOURCE_DIR}/models)
# The aggregate kind's own articulated step against the generic dense path (node_aggregate.c).
soadyn_add_test(test_embed_aggregate_kind SOURCES embed/test_embed_aggregate_kind.c loops/random_loops.c
                random_tree.c LABELS "unit;embed" ARGS ${PROJECT_SOURCE_DIR}/models)
