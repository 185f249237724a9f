# Batched evaluation (soadyn/batch.h, issue 12): part of the core. POSIX threads are in the C
# library (glibc >= 2.34); the SIMD kernel is one file compiled for AVX2 + FMA on x86-64 only, called
# after a run-time check of the processor (batch.c), so the library still runs on any x86-64. That
# file alone has floating-point contraction on (-ffp-contract=fast: a * b + c as one fused
# multiply-add; its header says why and what it does to the results); the rest stays ISO C.
list(APPEND SOADYN_CORE_SOURCES batch/batch.c)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  list(APPEND SOADYN_CORE_SOURCES batch/lanes_dynamics.c)
  set_source_files_properties(batch/lanes_dynamics.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-ffp-contract=fast")
  set_source_files_properties(batch/batch.c PROPERTIES COMPILE_DEFINITIONS SOADYN_BATCH_SIMD=1)
endif()
