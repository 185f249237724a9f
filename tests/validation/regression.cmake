# The accuracy guard of issue 12 (tests/validation/regression_dump.c): the rigid results of every
# model of ../shared/models equal those of f590bae, whose output is regression_golden.txt.gz, to
# 1e-12. Included by tests/CMakeLists.txt when the io layer is built; paths relative to tests/.
find_package(ZLIB REQUIRED)
soadyn_add_test(test_regression_f590bae SOURCES validation/regression_dump.c LABELS shared_models
                ARGS check ${SOADYN_SHARED_MODELS} ${CMAKE_CURRENT_SOURCE_DIR}/validation/regression_golden.txt.gz)
target_link_libraries(test_regression_f590bae PRIVATE ZLIB::ZLIB)
