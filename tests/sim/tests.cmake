# Tests of the sim layer and the `soadyn` command (included by tests/CMakeLists.txt).
if(SOADYN_WITH_CVODE) # RK4 and both CVODE integrators
  soadyn_add_test(test_sim_integrators SOURCES sim/test_sim_integrators.c random_tree.c LABELS unit)
endif()
soadyn_add_test(test_sim_loops SOURCES sim/test_sim_loops.c LABELS unit) # closed loops in sd_simulate
# embedded loops in sd_simulate (sd_sim_options.embed): N^T tau, forces, CVODE, mixed, errors
if(SOADYN_WITH_IO)
  soadyn_add_test(test_sim_embed SOURCES sim/test_sim_embed.c loops/random_loops.c random_tree.c LABELS unit
    ARGS ${PROJECT_SOURCE_DIR}/models)
endif()
# test_cli runs the program (on URDF models, with CVODE and plots): its path, and LSan suppressions
# for third-party font caches (see lsan.supp).
if(SOADYN_WITH_IO AND SOADYN_WITH_CVODE AND SOADYN_WITH_PLOT)
  soadyn_add_test(test_cli SOURCES sim/test_cli.c sim/mini_json.c LABELS unit
    ARGS $<TARGET_FILE:soadyn_cli> ${CMAKE_CURRENT_LIST_DIR}/lsan.supp)
  add_dependencies(test_cli soadyn_cli) # the test runs the program
endif()
# The program on a closed-loop model (a URDF+ four-bar) against the library at the same state.
if(SOADYN_WITH_IO)
  soadyn_add_test(test_cli_loops SOURCES sim/test_cli_loops.c sim/cli_child.c sim/mini_json.c LABELS unit
    ARGS $<TARGET_FILE:soadyn_cli> ${PROJECT_SOURCE_DIR}/models)
  add_dependencies(test_cli_loops soadyn_cli)
endif()
# The program with --embed (info, eval, simulate on models/four_bar.urdf) against the library.
if(SOADYN_WITH_IO)
  soadyn_add_test(test_cli_embed SOURCES sim/test_cli_embed.c sim/cli_child.c sim/mini_json.c LABELS unit
    ARGS $<TARGET_FILE:soadyn_cli> ${PROJECT_SOURCE_DIR}/models)
  add_dependencies(test_cli_embed soadyn_cli)
endif()
# The command's JSON writer on its own (compiled from cli/ as it is).
soadyn_add_test(test_json_writer SOURCES sim/test_json_writer.c sim/mini_json.c ${PROJECT_SOURCE_DIR}/cli/json_writer.c
  LABELS unit)
target_include_directories(test_json_writer PRIVATE ${PROJECT_SOURCE_DIR}/cli)
# The program on the bundled flexible-body examples (models/spacecraft.urdf, models/flexible_arm.urdf):
# info's frequencies, eval's modal accelerations, simulate's modal coordinates and tip deflection.
if(SOADYN_WITH_IO AND SOADYN_WITH_PLOT)
  soadyn_add_test(test_cli_flex SOURCES sim/test_cli_flex.c sim/cli_child.c sim/mini_json.c LABELS unit
    ARGS $<TARGET_FILE:soadyn_cli> ${PROJECT_SOURCE_DIR}/models)
  add_dependencies(test_cli_flex soadyn_cli)
endif()
# What the program takes from a model file and lets the command line replace: --gravity on every
# command, MJCF <option timestep> as simulate's dt, eval holding the joints --q names (mimic joints).
if(SOADYN_WITH_IO)
  soadyn_add_test(test_cli_model_files SOURCES sim/test_cli_model_files.c sim/cli_child.c sim/mini_json.c LABELS unit
    ARGS $<TARGET_FILE:soadyn_cli> ${PROJECT_SOURCE_DIR}/models)
  add_dependencies(test_cli_model_files soadyn_cli)
endif()
# The marks of an incomplete run in the plot and the page, the output probe, sd_simulate_check.
if(SOADYN_WITH_IO AND SOADYN_WITH_PLOT)
  soadyn_add_test(test_output_marks SOURCES sim/test_output_marks.c sim/cli_child.c LABELS unit)
endif()
# CVODE BDF with the analytical Jacobian (sd_sim_options.jacobian): the Jacobian against differences,
# the stiff-model claims (fewer right-hand sides than difference quotients, RK4's state at H/10), the
# choice and its refusals.
if(SOADYN_WITH_CVODE)
  soadyn_add_test(test_sim_jacobian SOURCES sim/test_sim_jacobian.c random_tree.c LABELS unit)
endif()
# The bundled deployment example (models/spacecraft_deploy.urdf, docs/deployment.md): simulate 20 s
# with the CSV and the page, energy, momentum, the loop's closure, the deployment and the page.
# 2.6 s in Release, 5 min under the sanitizers: labelled embed_long, it runs in the Release pass only
# (its code paths, the embedded flexible model and the CLI's simulate, run there in
# test_embed_flexible and test_cli_embed).
if(SOADYN_WITH_IO AND SOADYN_WITH_VIEWER)
  soadyn_add_test(test_example_deploy SOURCES sim/test_example_deploy.c sim/cli_child.c sim/mini_json.c
    LABELS "example;embed_long" ARGS $<TARGET_FILE:soadyn_cli> ${PROJECT_SOURCE_DIR}/models)
  add_dependencies(test_example_deploy soadyn_cli)
endif()
