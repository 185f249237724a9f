/*
 * src/sim/cvode_not_built.c — the CVODE integrators in a library configured without SUNDIALS
 * (SOADYN_WITH_CVODE=OFF): sd_simulate() asked for SD_INTEGRATOR_CVODE_BDF or _ADAMS says they are
 * not offered, after the start sample (simulate.c calls the integrator once the run is set up).
 * RK4 is unaffected. <soadyn/config.h> has SOADYN_HAS_CVODE = 0.
 */
#include "sim/sim_internal.h"

sd_status sim_cvode_run(sim_run *run, sd_error *err)
{
    return sd_error_set(err, SD_E_NOT_SUPPORTED,
                        "integrator %s is not offered: soadyn was built without SUNDIALS CVODE "
                        "(SOADYN_WITH_CVODE=OFF); rk4 is",
                        sd_integrator_name(run->opt->integrator));
}
