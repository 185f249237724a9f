# Tests of the sim layer and the `soadyn` command (included by tests/CMakeLists.txt).
soadyn_add_test(test_sim_integrators SOURCES sim/test_sim_integrators.c random_tree.c LABELS unit)
# test_cli runs the program: its path, and LSan suppressions for third-party font caches (see lsan.supp).
soadyn_add_test(test_cli SOURCES sim/test_cli.c sim/mini_json.c LABELS unit
  ARGS $<TARGET_FILE:soadyn_cli> ${CMAKE_CURRENT_LIST_DIR}/lsan.supp)
add_dependencies(test_cli soadyn_cli) # the test runs the program
