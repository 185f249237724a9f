# Batched evaluation (soadyn/batch.h; included by tests/CMakeLists.txt).
soadyn_add_test(test_batch SOURCES batch/test_batch.c random_tree.c LABELS unit)
