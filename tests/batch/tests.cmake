# Batched evaluation (soadyn/batch.h; included by tests/CMakeLists.txt).
soadyn_add_test(test_batch SOURCES batch/test_batch.c flex/random_flex.c random_tree.c LABELS unit)
# LAPACKE (the loops component's, always built): M's eigenvalues, for the forward bound's cond(M)
target_link_libraries(test_batch PRIVATE PkgConfig::LAPACKE)
