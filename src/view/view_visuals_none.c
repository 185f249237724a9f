/*
 * src/view/view_visuals_none.c — the viewer in a build without the io component (no libxml2): the
 * model file is not read again, so every body gets the fallback shapes (capsules, inertia boxes).
 */
#include <stdlib.h>
#include <string.h>

#include "view/view_internal.h"

view_visual *sd_view_visual_add(view_visuals *visuals, int body)
{
    (void)visuals, (void)body;
    return NULL;
}

void sd_view_visuals_free(view_visuals *visuals)
{
    if (visuals) memset(visuals, 0, sizeof(*visuals));
}

sd_status sd_view_read_visuals(const sd_model *model, const char *path, const sd_view_options *options,
                               view_visuals *out, sd_error *err)
{
    (void)model, (void)path, (void)options, (void)err;
    memset(out, 0, sizeof(*out));
    return SD_OK;
}
