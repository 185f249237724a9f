/*
 * cli/compiled.c — --compiled of eval, simulate and bench (cli.h): the model's generated code
 * compiled and run through the library's entry points (soadyn/compile.h), or, when it cannot be, a
 * warning and the library's own code.
 */
#include <stdio.h>

#include "cli.h"

void cli_compile(const char *cmd, sd_model *model, char *line, size_t cap)
{
    sd_error err = {0};
    if (sd_model_compile(model, NULL, &err) != SD_OK) {
        fprintf(stderr, "soadyn %s: warning: --compiled: %s\n", cmd, err.message);
        snprintf(line, cap, "the library (--compiled not in effect: see the warning)");
        return;
    }
    sd_compile_info info;
    sd_model_compile_info(model, &info);
    if (info.cache_hit)
        snprintf(line, cap, "compiled code, from the cache (%s; loaded and self-checked in %.2f ms)", info.path,
                 1e3 * info.check_seconds);
    else
        snprintf(line, cap, "compiled code, compiled now: cache miss (%s; generated in %.3f s, compiled by %s in %.2f s, "
                            "loaded and self-checked in %.2f ms)",
                 info.path, info.generate_seconds, info.compiler, info.compile_seconds, 1e3 * info.check_seconds);
}
