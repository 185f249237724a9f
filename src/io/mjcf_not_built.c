/*
 * io/mjcf_not_built.c — the MJCF reader in a library configured without the io component
 * (SOADYN_WITH_IO=OFF, no libxml2): it says it is not offered, as not_built.c does for URDF.
 */
#include <soadyn/mjcf.h>

#include "internal.h"

static sd_status not_offered(const char *source, sd_model **model, sd_error *err)
{
    if (model) *model = NULL;
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "%s: reading MJCF models is not offered: soadyn was built without the io component "
                        "(SOADYN_WITH_IO=OFF, which drops libxml2)",
                        source ? source : "<model>");
}

sd_status sd_mjcf_load_file(const char *path, sd_model **model, sd_error *err)
{
    return not_offered(path, model, err);
}

sd_status sd_mjcf_load_string(const char *xml, size_t length, const char *source_name, sd_model **model,
                              sd_error *err)
{
    (void)xml;
    (void)length;
    return not_offered(source_name, model, err);
}
