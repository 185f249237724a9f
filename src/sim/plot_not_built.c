/*
 * src/sim/plot_not_built.c — plots in a library configured without PLplot (SOADYN_WITH_PLOT=OFF):
 * sd_plot_trajectory() says it is not offered and writes no file. Trajectories and CSV output are
 * unaffected. <soadyn/config.h> has SOADYN_HAS_PLOT = 0.
 */
#include <soadyn/sim.h>

#include "internal.h"

sd_status sd_plot_trajectory(const sd_trajectory *trajectory, const char *path, sd_error *err)
{
    (void)trajectory;
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "%s: plots are not offered: soadyn was built without PLplot (SOADYN_WITH_PLOT=OFF)",
                        path ? path : "sd_plot_trajectory");
}
