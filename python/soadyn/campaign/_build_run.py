"""Build the cffi extension soadyn.campaign._run_cffi (API mode over libsoadyn.so): what a campaign
worker needs of the C library - loading a model, copying it, its parameter setters
(soadyn/params.h), sd_simulate with the observer of _run.c - kept apart from soadyn._soadyn_cffi so
that the campaign owns its C surface. libsoadyn is found as for soadyn._soadyn_cffi
(soadyn/_build.py: SOADYN_INCLUDE_DIRS + SOADYN_LIBRARY_DIR, or pkg-config).

Command line (for CMake): python3 _build_run.py OUTPUT_DIR builds the extension into OUTPUT_DIR.
"""
import importlib.util
import os
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))

# What _run.c adds to the library's declarations (soadyn/_build.py's CDEF_LIBRARY).
CDEF_RUN = r"""
typedef struct sdc_metric { int kind; int body, node; double value; } sdc_metric;
typedef struct sdc_run {
    const sd_model *model; sd_data *data; const double *tau; sd_control_fn control; void *control_user;
    int nmetrics; sdc_metric *metrics; long history_every, history_capacity, history_count;
    double *history_t, *history_q, *history_u; double *scratch; ...;
} sdc_run;
sd_status sdc_simulate(sdc_run *r, sd_sim_options *o, double *q, double *u, sd_sim_stats *stats, sd_error *err);
void sdc_simulate_task(sdc_run *runs, long n, sd_sim_options *o, double *q, double *u, int *status,
                       sd_error *errs);
sd_status sdc_baseline(sd_model *const *models, const sd_sim_options *o, long n, double *q0, double *u0,
                       sd_error *err);

extern "Python" void sdc_control_callback(void *user, double t, const double *q, const double *u, double *tau);
"""


def _package_build():
    """soadyn/_build.py, loaded by path (importing the package would need its extension): its rule
    for finding libsoadyn and the library's declarations."""
    path = os.path.join(os.path.dirname(HERE), "_build.py")
    spec = importlib.util.spec_from_file_location("_soadyn_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_ffibuilder():
    build = _package_build()
    include_dirs, library_dirs = build.library_location()
    rpath = build._rpath(library_dirs)
    with open(os.path.join(HERE, "_run.c"), encoding="utf-8") as f:
        source = f.read()
    ffi = cffi.FFI()
    ffi.cdef(build.CDEF_LIBRARY + CDEF_RUN)
    ffi.set_source("soadyn.campaign._run_cffi", source, include_dirs=include_dirs, library_dirs=library_dirs,
                   libraries=["soadyn"], extra_compile_args=["-O2", "-std=c11"],
                   extra_link_args=["-Wl,-rpath," + ":".join(rpath)])
    return ffi


if __name__ == "__main__":
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    make_ffibuilder().compile(tmpdir=out, verbose=False)
