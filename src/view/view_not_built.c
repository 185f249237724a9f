/*
 * src/view/view_not_built.c — the viewer in a build without it (SOADYN_WITH_VIEWER=OFF, or npm not
 * found when configuring): the page writer says it is not offered. sd_trajectory_read_csv needs
 * nothing and is built either way (trajectory_csv.c).
 */
#include <string.h>

#include "internal.h"
#include "view/view_internal.h"

void sd_view_options_init(sd_view_options *options)
{
    if (!options) return; /* nothing to fill (was a NULL dereference) */
    if (options) memset(options, 0, sizeof(*options));
}

sd_status sd_view_write_html(const sd_model *model, const sd_trajectory *trajectory, const sd_view_options *options,
                             const char *path, sd_error *err)
{
    (void)model, (void)trajectory, (void)options;
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "%s: viewer not offered: built without npm (SOADYN_WITH_VIEWER=OFF; the page's three.js is "
                        "bundled from npm when the library is built)", path ? path : "(no path)");
}
