/*
 * fuzz/fuzz_urdf.c — libFuzzer target for the URDF reader: the input is a file's text, loaded four
 * times with the reader's three options (fixed or floating root, fixed joints merged or kept, mimic
 * joints coupled or independent) set so that every pair of options is seen in all four of its
 * combinations, each load judged by fuzz_check_load() (model_check.c).
 *
 * The library must never print: libxml2's global error handlers, which print on stderr by default,
 * are replaced by ones that trap (libxml2_trap.c), so any libxml2 message the reader failed to
 * route into its sd_error is a finding.
 */
#include <stdint.h>
#include <stdio.h>

#include "libxml2_trap.h"
#include "model_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    static const struct {
        const char *name;
        sd_urdf_options options;
    } ways[] = {
        {"urdf (fixed root, fixed joints merged, mimics coupled)", {.floating_base = 0, .keep_fixed_joints = 0}},
        {"urdf (floating root, fixed joints merged, mimics independent)",
         {.floating_base = 1, .keep_fixed_joints = 0, .mimic_independent = 1}},
        {"urdf (fixed root, fixed joints kept, mimics independent)",
         {.floating_base = 0, .keep_fixed_joints = 1, .mimic_independent = 1}},
        {"urdf (floating root, fixed joints kept, mimics coupled)", {.floating_base = 1, .keep_fixed_joints = 1}},
    };
    const uint64_t seed = fuzz_input_seed(bytes, size);
    for (size_t w = 0; w < sizeof ways / sizeof *ways; ++w) {
        sd_model *model = NULL;
        sd_error err;
        const sd_status st = sd_urdf_load_string((const char *)bytes, size, "<fuzz>", &ways[w].options, &model, &err);
        fuzz_check_load(ways[w].name, st, model, &err, seed);
        sd_model_free(model);
    }
    return 0;
}
