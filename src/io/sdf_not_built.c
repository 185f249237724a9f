/*
 * src/io/sdf_not_built.c — the SDF loader in a library configured without it (SOADYN_WITH_SDF=OFF,
 * or SOADYN_WITH_IO=OFF, so that libsdformat and C++ are not needed): it says it is not offered.
 * The symbols stay so that a program built against a full soadyn still links and runs against this
 * one, and learns why an SDF file cannot be read. <soadyn/config.h> has SOADYN_HAS_SDF = 0.
 */
#include <soadyn/sdf.h>

#include "internal.h"

static sd_status not_offered(const char *source, sd_model **model, sd_error *err)
{
    if (model) *model = NULL;
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "%s: reading SDF models is not offered in this build: soadyn was built without "
                        "libsdformat (SOADYN_WITH_SDF=OFF or SOADYN_WITH_IO=OFF; Debian: libsdformat-dev)",
                        source ? source : "<model>");
}

sd_status sd_sdf_load_file(const char *path, const sd_sdf_options *options, sd_model **model, sd_error *err)
{
    (void)options;
    return not_offered(path, model, err);
}

sd_status sd_sdf_load_string(const char *text, size_t length, const char *source_name,
                             const sd_sdf_options *options, sd_model **model, sd_error *err)
{
    (void)text;
    (void)length;
    (void)options;
    return not_offered(source_name, model, err);
}
