/*
 * src/compile/compile_check.h — the self-check a compiled model's code passes before the library
 * runs it (soadyn/compile.h).
 */
#ifndef SOADYN_COMPILE_CHECK_H
#define SOADYN_COMPILE_CHECK_H

#include "../internal.h"

/* The largest relative difference allowed between generated and library outputs; for the solves (FD,
 * M^-1), max(it, 16 eps cond_1(M)): round-off amplified by M's condition, the factorisations differing. */
#define SD_COMPILE_CHECK_TOLERANCE 1e-12

/* Compare every function of `code` with the library's own on model m (which must not run compiled
 * code meanwhile) at nstates random states: each output within SD_COMPILE_CHECK_TOLERANCE of the
 * library's (the solves: as above), relative to the largest magnitude of the library's output.
 * *worst receives the largest relative difference; a failure names the function, the state and the difference. */
sd_status sd_compiled_self_check(const sd_model *m, const sd_compiled_code *code, int nstates, double *worst,
                                 sd_error *err);

#endif /* SOADYN_COMPILE_CHECK_H */
