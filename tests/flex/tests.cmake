# Tests of flexible bodies (soadyn/flex.h). Included by tests/CMakeLists.txt; paths relative to tests/.
soadyn_add_test(test_beam SOURCES flex/test_beam.c LABELS unit)
soadyn_add_test(test_flex_model SOURCES flex/test_flex_model.c random_tree.c LABELS unit)
soadyn_add_test(test_node_engine SOURCES flex/test_node_engine.c flex/random_flex.c random_tree.c LABELS unit)
soadyn_add_test(test_flex_body SOURCES flex/test_flex_body.c LABELS unit)
if(SOADYN_WITH_IO)
  soadyn_add_test(test_flex_file SOURCES flex/test_flex_file.c LABELS unit)
endif()
soadyn_add_test(test_flex_articulated SOURCES flex/test_flex_articulated.c flex/random_flex.c random_tree.c LABELS unit)
# LAPACKE (the loops component's, always built): the dense references of M^-1, the solve and det M
soadyn_add_test(test_flex_factors SOURCES flex/test_flex_factors.c flex/random_flex.c random_tree.c LABELS unit)
target_link_libraries(test_flex_factors PRIVATE PkgConfig::LAPACKE)
if(SOADYN_WITH_IO)
  soadyn_add_test(test_urdf_flex SOURCES flex/test_urdf_flex.c LABELS unit)
endif()
# The beam table and the spacecraft's energy and momentum through sd_simulate; with the io component
# it also loads models/spacecraft.urdf (argument: the models folder).
if(SOADYN_WITH_IO)
  soadyn_add_test(test_flex_examples SOURCES flex/test_flex_examples.c LABELS unit ARGS ${PROJECT_SOURCE_DIR}/models)
else()
  soadyn_add_test(test_flex_examples SOURCES flex/test_flex_examples.c LABELS unit)
endif()
soadyn_add_test(test_system_modes SOURCES flex/test_system_modes.c LABELS unit)
