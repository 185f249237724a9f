/*
 * soadyn/cpu.h — which machine code the single-state entry points run (docs/dispatch.md).
 *
 * A portable x86-64 build (the default, SOADYN_NATIVE=OFF) carries its hot paths (kinematics,
 * inverse dynamics, mass matrix, forward dynamics, M^-1, ... : the functions of dynamics.h that
 * evaluate a state) three times: for any x86-64 (SSE2), for x86-64-v3 (AVX2 + FMA) and for
 * x86-64-v4 (AVX-512). The level is chosen once, when the library is loaded, from what the
 * processor and the operating system support, or from the environment variable SOADYN_CPU
 * (baseline, avx2, avx512 or auto), read then and never again. Every call of the process then runs
 * that level. The levels agree to rounding (fused multiply-adds round once): set SOADYN_CPU to the
 * same level on every machine for results equal bit for bit across machines.
 */
#ifndef SOADYN_CPU_H
#define SOADYN_CPU_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The level the entry points run: "baseline", "avx2" or "avx512" in a build with run-time dispatch;
 * "build target" in a build without it (SOADYN_NATIVE=ON, SOADYN_DISPATCH=OFF, not x86-64), whose
 * code runs as its compiler flags made it. Never NULL. */
SD_API const char *sd_cpu_level(void);

/* Why that level, in one line: chosen from the processor, forced by SOADYN_CPU, a SOADYN_CPU level
 * the processor lacks (and the level used instead), a SOADYN_CPU value not understood, or why this
 * build has no dispatch. Never NULL. */
SD_API const char *sd_cpu_note(void);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_CPU_H */
