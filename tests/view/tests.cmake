# The viewer (soadyn/view.h, issue #13; included by tests/CMakeLists.txt).
# test_view (unit): the CSV reader, the page's placements, forces and visuals against independent
# computations; it also writes the pages the browser tests open (double pendulum, flexible arm,
# spacecraft, four-bar, a robot with COLLADA and glTF meshes; the shared humanoid when present) and
# what each must show (PAGE.html.expect), hence the fixture.
soadyn_add_test(test_view SOURCES view/test_view.c random_tree.c LABELS unit shared_models
  ARGS ${PROJECT_SOURCE_DIR}/models ${SOADYN_SHARED_MODELS}/humanoid_mjcf/humanoid.xml ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(test_view PROPERTIES FIXTURES_SETUP view_pages)
# `soadyn view` as a user runs it: meshes not drawn on stderr, --mesh-path, ROS_PACKAGE_PATH, --follow.
if(SOADYN_WITH_VIEWER AND SOADYN_WITH_IO)
  soadyn_add_test(test_cli_view SOURCES view/test_cli_view.c sim/cli_child.c LABELS unit
    ARGS $<TARGET_FILE:soadyn_cli> ${PROJECT_SOURCE_DIR}/models)
  add_dependencies(test_cli_view soadyn_cli)
endif()
# The browser tests (label "browser"): headless Chromium (Debian's) through playwright-core from the
# viewer's npm lock file; skip (77) without Chromium, node or the page.
if(SOADYN_WITH_VIEWER AND SOADYN_WITH_IO)
  foreach(page double_pendulum flexible_arm spacecraft four_bar meshes humanoid)
    set(labels browser)
    if(page STREQUAL humanoid)
      set(labels browser shared_models)
    endif()
    add_test(NAME test_view_browser_${page}
      COMMAND ${SOADYN_NODE} ${CMAKE_CURRENT_LIST_DIR}/browser_test.mjs
              ${CMAKE_CURRENT_BINARY_DIR}/view_${page}.html ${CMAKE_CURRENT_BINARY_DIR}/view_${page}.png)
    set_tests_properties(test_view_browser_${page} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77
      FIXTURES_REQUIRED view_pages TIMEOUT 180 ENVIRONMENT "NODE_PATH=${SOADYN_VIEWER_NODE_MODULES}")
  endforeach()
endif()
