# Batched evaluation (soadyn/batch.h, issue 12): part of the core. POSIX threads are in the C
# library (glibc >= 2.34). The SIMD kernel is one text (lanes_dynamics.c) compiled twice on x86-64
# only: for AVX2 + FMA (4 states per step) and, through lanes_dynamics_avx512.c, for AVX-512 (8);
# batch.c checks the processor at run time and calls the widest it has, so the library still runs on
# any x86-64. Those two files are compiled with FMA whatever the build's target (the library fuses
# a * b + c wherever the processor has FMA, CMakeLists.txt; lanes_dynamics.c's header says what it
# does to the results).
list(APPEND SOADYN_CORE_SOURCES batch/batch.c)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  list(APPEND SOADYN_CORE_SOURCES batch/lanes_dynamics.c batch/lanes_dynamics_avx512.c)
  set_source_files_properties(batch/lanes_dynamics.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
  set_source_files_properties(batch/lanes_dynamics_avx512.c PROPERTIES
    COMPILE_OPTIONS "-mavx2;-mfma;-mavx512f;-mavx512dq;-mavx512vl")
  set_source_files_properties(batch/batch.c PROPERTIES COMPILE_DEFINITIONS SOADYN_BATCH_SIMD=1)
endif()
