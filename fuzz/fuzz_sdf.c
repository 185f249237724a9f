/*
 * fuzz/fuzz_sdf.c — libFuzzer target for the SDF reader (src/io/sdf_reader.cc, libsdformat 12): the
 * input is a file's text, loaded twice (a floating root with fixed joints merged; welded to the
 * world with fixed joints kept), each load judged by fuzz_check_load() (model_check.c). libsdformat
 * itself is not instrumented; what it returns is, and so is every number the reader takes from it.
 */
#include <stdint.h>

#include <soadyn/sdf.h>

#include "model_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    static const struct {
        const char *name;
        sd_sdf_options options;
    } ways[] = {
        {"sdf (floating unless jointed to world, fixed joints merged)", {.keep_fixed_joints = 0}},
        {"sdf (welded to the world, fixed joints kept)", {.keep_fixed_joints = 1, .fixed_base = 1}},
    };
    const uint64_t seed = fuzz_input_seed(bytes, size);
    for (size_t w = 0; w < sizeof ways / sizeof *ways; ++w) {
        sd_model *model = NULL;
        sd_error err;
        const sd_status st = sd_sdf_load_string((const char *)bytes, size, "<fuzz>", &ways[w].options, &model, &err);
        fuzz_check_load(ways[w].name, st, model, &err, seed);
        sd_model_free(model);
    }
    return 0;
}
