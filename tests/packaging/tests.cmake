# Tests of the packaging (included by tests/CMakeLists.txt; paths relative to tests/): what each
# component does when built or switched off, the core library's dependencies and exports, an install
# used through pkg-config (static and shared links), and a build with every component off.
soadyn_add_test(test_components SOURCES packaging/test_components.c LABELS "packaging;unit")

# The rest inspect and link the libraries outside the build: not under the sanitizers (a program
# linked by hand would lack their runtime), and only for a single-configuration generator.
if(NOT SOADYN_SANITIZE AND NOT CMAKE_CONFIGURATION_TYPES)
  foreach(component IO CVODE PLOT)
    if(SOADYN_WITH_${component})
      set(with_${component} 1)
    else()
      set(with_${component} 0)
    endif()
  endforeach()
  list(JOIN SOADYN_COMPONENT_HEADERS " " component_headers)
  add_test(NAME packaging_core_dependencies
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/core_dependencies.sh
            $<TARGET_FILE:soadyn_core> $<TARGET_FILE:soadyn> ${PROJECT_SOURCE_DIR}/include
            "${component_headers}" ${with_IO} ${with_CVODE} ${with_PLOT})
  add_test(NAME packaging_install
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install_and_link.sh
            ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_C_COMPILER}
            ${CMAKE_CURRENT_BINARY_DIR}/packaging_install ${with_IO})
  # A whole configure and build: some 20 s, hence not in the "unit" label.
  add_test(NAME packaging_components_off
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/components_off.sh
            ${CMAKE_COMMAND} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/packaging_components_off
            ${CMAKE_C_COMPILER} "${CMAKE_GENERATOR}" ${SOADYN_WERROR} "${component_headers}")
  set_tests_properties(packaging_core_dependencies packaging_install PROPERTIES LABELS "packaging;unit")
  set_tests_properties(packaging_components_off PROPERTIES LABELS packaging)
endif()
