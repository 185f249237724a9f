/*
 * fuzz/fuzz_mjcf.c — the MJCF reader on arbitrary bytes: every load is a model that keeps the
 * contract (model_check.c: sizes, finite dynamics at a random state) or an error with a message,
 * and libxml2 never prints past the reader. The text is named as a file in a folder that does not
 * exist, so that <include> elements fail as missing files instead of reading the disk.
 */
#include <stdint.h>
#include <stdio.h>

#include <soadyn/mjcf.h>

#include "libxml2_trap.h"
#include "model_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    sd_model *model = NULL;
    sd_error err;
    const sd_status st =
        sd_mjcf_load_string((const char *)bytes, size, "/nonexistent-soadyn-fuzz/fuzz.xml", &model, &err);
    fuzz_check_load("mjcf", st, model, &err, fuzz_input_seed(bytes, size));
    sd_model_free(model);
    return 0;
}
