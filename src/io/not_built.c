/*
 * src/io/not_built.c — the io component's functions in a library configured without it
 * (SOADYN_WITH_IO=OFF, so that libxml2 is not needed): every loader says it is not offered. The
 * symbols stay so that a program built against a full soadyn still links and runs against this one,
 * and learns why a model file cannot be read. <soadyn/config.h> has SOADYN_HAS_IO = 0.
 */
#include <soadyn/flex.h>
#include <soadyn/urdf.h>

#include "internal.h"

static sd_status not_offered(const char *source, sd_model **model, sd_error *err)
{
    if (model) *model = NULL;
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "%s: reading URDF models is not offered: soadyn was built without the io component "
                        "(SOADYN_WITH_IO=OFF, which drops libxml2)",
                        source ? source : "<model>");
}

sd_status sd_urdf_load_file(const char *path, const sd_urdf_options *options, sd_model **model, sd_error *err)
{
    (void)options;
    return not_offered(path, model, err);
}

sd_status sd_urdf_load_string(const char *xml, size_t length, const char *source_name,
                              const sd_urdf_options *options, sd_model **model, sd_error *err)
{
    (void)xml;
    (void)length;
    (void)options;
    return not_offered(source_name, model, err);
}

sd_status sd_flex_data_read_file(const char *path, sd_flex_data **data, sd_error *err)
{
    if (data) *data = NULL;
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "%s: reading flexible-body data files is not offered: soadyn was built without the io "
                        "component (SOADYN_WITH_IO=OFF, which drops jansson)",
                        path ? path : "<flex data>");
}
