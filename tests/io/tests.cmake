# Tests of the io layer (URDF in). Included by tests/CMakeLists.txt; paths relative to tests/.
soadyn_add_test(test_urdf_joints SOURCES io/test_urdf_joints.c LABELS unit)
soadyn_add_test(test_urdf_lumping SOURCES io/test_urdf_lumping.c LABELS unit)
soadyn_add_test(test_urdf_errors SOURCES io/test_urdf_errors.c LABELS unit
                ARGS ${CMAKE_CURRENT_SOURCE_DIR}/io/broken)
soadyn_add_test(test_urdf_bundled_models SOURCES io/test_urdf_bundled_models.c LABELS unit
                ARGS ${PROJECT_SOURCE_DIR}/models)
soadyn_add_test(test_urdf_names SOURCES io/test_urdf_names.c LABELS unit)
soadyn_add_test(test_urdf_evaluates_finite SOURCES io/test_urdf_evaluates_finite.c LABELS unit
                ARGS ${CMAKE_CURRENT_SOURCE_DIR}/io/broken ${PROJECT_SOURCE_DIR}/models)
soadyn_add_test(test_urdf_shared_models SOURCES io/test_urdf_shared_models.c LABELS shared_models
                ARGS ${SOADYN_SHARED_MODELS})
soadyn_add_test(test_urdf_mimic SOURCES io/test_urdf_mimic.c LABELS shared_models
                ARGS ${SOADYN_SHARED_MODELS})
soadyn_add_test(test_urdf_plus SOURCES io/test_urdf_plus.c LABELS unit)
soadyn_add_test(test_urdf_rotor_inertia SOURCES io/test_urdf_rotor_inertia.c LABELS unit)
add_test(NAME test_urdf_rotor_inertia_iiwa COMMAND test_urdf_rotor_inertia ${SOADYN_SHARED_MODELS})
set_tests_properties(test_urdf_rotor_inertia_iiwa PROPERTIES SKIP_RETURN_CODE 77 LABELS shared_models)
soadyn_add_test(test_mjcf_shared_models SOURCES io/test_mjcf_shared_models.c LABELS shared_models
                ARGS ${SOADYN_SHARED_MODELS})
soadyn_add_test(test_mjcf_errors SOURCES io/test_mjcf_errors.c LABELS unit ARGS ${CMAKE_CURRENT_SOURCE_DIR}/io/broken_mjcf)
soadyn_add_test(test_mjcf_semantics SOURCES io/test_mjcf_semantics.c LABELS unit)
if(SOADYN_WITH_SDF)
  soadyn_add_test(test_sdf_shared_models SOURCES io/test_sdf_shared_models.c LABELS shared_models
                  ARGS ${SOADYN_SHARED_MODELS})
endif()
if(SOADYN_WITH_SDF)
  soadyn_add_test(test_sdf_errors SOURCES io/test_sdf_errors.c LABELS unit
                  ARGS ${CMAKE_CURRENT_SOURCE_DIR}/io/broken_sdf)
endif()
if(SOADYN_WITH_SDF)
  soadyn_add_test(test_sdf_semantics SOURCES io/test_sdf_semantics.c LABELS unit)
endif()
if(SOADYN_WITH_SDF)
  soadyn_add_test(test_cassie_sdf_mjcf SOURCES io/test_cassie_sdf_mjcf.c LABELS shared_models ARGS ${SOADYN_SHARED_MODELS})
endif()
soadyn_add_test(test_io_hostile SOURCES io/test_io_hostile.c LABELS unit)
soadyn_add_test(test_xml_out_of_memory SOURCES io/test_xml_out_of_memory.c LABELS unit)
target_link_libraries(test_xml_out_of_memory PRIVATE PkgConfig::LIBXML2)
