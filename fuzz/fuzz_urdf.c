/*
 * fuzz/fuzz_urdf.c — libFuzzer target for the URDF reader: the input is a file's text, loaded four
 * times with the reader's three options (fixed or floating root, fixed joints merged or kept, mimic
 * joints coupled or independent) set so that every pair of options is seen in all four of its
 * combinations, each load judged by fuzz_check_load() (model_check.c).
 *
 * The library must never print: libxml2's global error handlers, which print on stderr by default,
 * are replaced here by ones that trap, so any libxml2 message the reader failed to route into its
 * sd_error is a finding.
 */
#include <stdint.h>
#include <stdio.h>

#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

#include "model_check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

static void libxml2_generic_message(void *context, const char *format, ...)
{
    (void)context;
    fprintf(stderr, "fuzz: contract broken: libxml2 printed past the reader: %s\n", format);
    __builtin_trap();
}

#if LIBXML_VERSION >= 21200
static void libxml2_structured_message(void *context, const xmlError *error)
#else
static void libxml2_structured_message(void *context, xmlErrorPtr error)
#endif
{
    (void)context;
    fprintf(stderr, "fuzz: contract broken: libxml2 printed past the reader (line %d): %s\n", error ? error->line : 0,
            error && error->message ? error->message : "(no message)");
    __builtin_trap();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    xmlSetGenericErrorFunc(NULL, libxml2_generic_message);
    xmlSetStructuredErrorFunc(NULL, libxml2_structured_message);
    return 0;
}

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
