/*
 * src/dispatch/dispatch_components.c — the components' dispatched entry points
 * (dispatched_components.h): each one indirect call into the copy of the hot paths, core and
 * components linked together, compiled for the level dispatch.c chose (docs/dispatch.md).
 *
 * libsoadyn's copies hold the core's hot paths and the components' (src/dispatch/sources.cmake), so
 * that a closed-loop call runs the sweeps of its own level throughout; libsoadyn_core's hold the
 * core's alone. The level is dispatch.c's: sd_dispatch_choose_level chooses it once, whichever of the
 * two load-time constructors runs first.
 */
#include <soadyn/cpu.h>
#include <soadyn/embed.h>
#include <soadyn/loops.h>

#include "cpu_level.h"

#define SD_DISPATCHED(name, params, args)                                                                  \
    sd_status sd_impl_##name params;                                                                      \
    sd_status sd_avx2_sd_impl_##name params;                                                              \
    sd_status sd_avx512_sd_impl_##name params;
#include "dispatched_components.h"
#undef SD_DISPATCHED

typedef struct component_table {
#define SD_DISPATCHED(name, params, args) sd_status(*name) params;
#include "dispatched_components.h"
#undef SD_DISPATCHED
} component_table;

#define SD_DISPATCHED(name, params, args) .name = sd_impl_##name,
static const component_table baseline_table = {
#include "dispatched_components.h"
};
#undef SD_DISPATCHED
#define SD_DISPATCHED(name, params, args) .name = sd_avx2_sd_impl_##name,
static const component_table avx2_table = {
#include "dispatched_components.h"
};
#undef SD_DISPATCHED
#define SD_DISPATCHED(name, params, args) .name = sd_avx512_sd_impl_##name,
static const component_table avx512_table = {
#include "dispatched_components.h"
};
#undef SD_DISPATCHED

static const component_table *const level_tables[] = {&baseline_table, &avx2_table, &avx512_table};
static const component_table *active = &baseline_table;

__attribute__((constructor)) static void choose_components(void) { active = level_tables[sd_dispatch_choose_level()]; }

#define SD_DISPATCHED(name, params, args)                                                                  \
    sd_status sd_##name params { return active->name args; }
#include "dispatched_components.h"
#undef SD_DISPATCHED
