/*
 * src/dispatch/no_dispatch.c — soadyn/cpu.h in a build without run-time dispatch (src/dispatch/
 * sources.cmake says when): the hot paths are compiled once, for the build's target, and run as such.
 */
#include <soadyn/cpu.h>

#include "cpu_level.h"

const char *sd_cpu_level(void) { return "build target"; }

const char *sd_cpu_note(void) { return "no run-time dispatch in this build: " SOADYN_NO_DISPATCH_REASON; }

sd_cpu_level_id sd_cpu_level_id_active(void) { return SD_CPU_BUILD_TARGET; }
