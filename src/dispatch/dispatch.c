/*
 * src/dispatch/dispatch.c — the public entry points of the single-state hot paths (dispatched.h),
 * each one indirect call into the copy of the code compiled for this processor (docs/dispatch.md).
 *
 * src/dispatch/sources.cmake compiles the hot translation units three times: into the library as
 * they are (the baseline, any x86-64), and for x86-64-v3 and x86-64-v4 each into one relocatable
 * object whose symbols carry the prefix sd_avx2_ or sd_avx512_. In all three the definitions of the
 * dispatched functions are named sd_impl_X, so that sd_X here is the only public name. The table
 * starts at the baseline, which any x86-64 runs (a call from another library's constructor, before
 * ours, is therefore correct, only slower), and choose_level sets it once at load: no call tests the
 * processor.
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/cpu.h>
#include <soadyn/dynamics.h>

#include "cpu_level.h"

/* The three sets of implementations. */
#define SD_DISPATCHED(name, params, args)                                                                  \
    sd_status sd_impl_##name params;                                                                      \
    sd_status sd_avx2_sd_impl_##name params;                                                              \
    sd_status sd_avx512_sd_impl_##name params;
#include "dispatched.h"
#undef SD_DISPATCHED

/* One level's entry points. */
typedef struct dispatch_table {
#define SD_DISPATCHED(name, params, args) sd_status(*name) params;
#include "dispatched.h"
#undef SD_DISPATCHED
} dispatch_table;

#define SD_DISPATCHED(name, params, args) .name = sd_impl_##name,
static const dispatch_table baseline_table = {
#include "dispatched.h"
};
#undef SD_DISPATCHED
#define SD_DISPATCHED(name, params, args) .name = sd_avx2_sd_impl_##name,
static const dispatch_table avx2_table = {
#include "dispatched.h"
};
#undef SD_DISPATCHED
#define SD_DISPATCHED(name, params, args) .name = sd_avx512_sd_impl_##name,
static const dispatch_table avx512_table = {
#include "dispatched.h"
};
#undef SD_DISPATCHED

static const char *const level_names[] = {"baseline", "avx2", "avx512"};
static const dispatch_table *const level_tables[] = {&baseline_table, &avx2_table, &avx512_table};

/* Written once, by choose_level, before main (or before dlopen returns). */
static const dispatch_table *active = &baseline_table;
static sd_cpu_level_id active_level = SD_CPU_BASELINE;
static char note[160] = "chosen from the processor";

/* The highest level this processor runs: the instructions of x86-64-v3 (AVX2, FMA, BMI1/2, ...) or
 * of x86-64-v4 (AVX-512 F, BW, CD, DQ, VL), and the operating system's saving of their registers,
 * which __builtin_cpu_supports checks too (libgcc reads XGETBV). */
static sd_cpu_level_id processor_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return SD_CPU_AVX512;
    if (__builtin_cpu_supports("x86-64-v3")) return SD_CPU_AVX2;
    return SD_CPU_BASELINE;
}

sd_cpu_level_id sd_dispatch_choose_level(void)
{
    static int chosen = 0; /* load time: one thread */
    if (chosen) return active_level;
    chosen = 1;
    const sd_cpu_level_id best = processor_level();
    sd_cpu_level_id level = best;
    const char *asked = getenv("SOADYN_CPU");
    if (asked && *asked && strcmp(asked, "auto") != 0) {
        int found = -1;
        for (int i = 0; i <= SD_CPU_AVX512; ++i)
            if (strcmp(asked, level_names[i]) == 0) found = i;
        if (found < 0) {
            /* strncat: the value is the user's, of any length */
            strcpy(note, "SOADYN_CPU='");
            strncat(note, asked, 40);
            strcat(note, "' not understood (baseline, avx2, avx512, auto): chosen from the processor");
        } else if ((sd_cpu_level_id)found > best) {
            strcpy(note, "SOADYN_CPU=");
            strcat(note, level_names[found]);
            strcat(note, " asked, but this processor (or its operating system) lacks it: the highest it runs");
        } else {
            level = (sd_cpu_level_id)found;
            strcpy(note, "forced by SOADYN_CPU");
        }
    }
    active_level = level;
    active = level_tables[level];
    return level;
}

__attribute__((constructor)) static void choose_level(void) { (void)sd_dispatch_choose_level(); }

const char *sd_cpu_level(void) { return level_names[active_level]; }

sd_cpu_level_id sd_cpu_level_id_active(void) { return active_level; }

const char *sd_cpu_note(void) { return note; }

/* The public entry points. */
#define SD_DISPATCHED(name, params, args)                                                                  \
    sd_status sd_##name params { return active->name args; }
#include "dispatched.h"
#undef SD_DISPATCHED
