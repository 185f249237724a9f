# Tests of the loops component (closure constraints). Included by tests/CMakeLists.txt; paths
# relative to tests/.
soadyn_add_test(test_closed_loop_dynamics SOURCES loops/test_closed_loop_dynamics.c loops/random_loops.c random_tree.c
                LABELS unit)
soadyn_add_test(test_four_bar SOURCES loops/test_four_bar.c LABELS unit)
soadyn_add_test(test_constraint_solvers SOURCES loops/test_constraint_solvers.c loops/random_loops.c random_tree.c
                LABELS unit)
soadyn_add_test(test_urdf_loops SOURCES loops/test_urdf_loops.c LABELS unit ARGS ${PROJECT_SOURCE_DIR}/models)
soadyn_add_test(test_planar_closure SOURCES loops/test_planar_closure.c LABELS unit)
# Closed loops on models with flexible bodies (random trees; models/flexible_four_bar.urdf when the
# io component is built).
soadyn_add_test(test_flexible_loops SOURCES loops/test_flexible_loops.c loops/random_flex_loops.c loops/random_loops.c flex/random_flex.c
                random_tree.c LABELS "unit;loops;flex" ARGS ${PROJECT_SOURCE_DIR}/models)
# Prescribed hinges with closed loops (rigid and flexible random trees; models/four_bar.urdf).
soadyn_add_test(test_loops_prescribed SOURCES loops/test_loops_prescribed.c loops/random_flex_loops.c
                loops/random_loops.c flex/random_flex.c random_tree.c LABELS "unit;loops" ARGS ${PROJECT_SOURCE_DIR}/models)
