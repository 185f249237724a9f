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

CDEF = r"""
typedef enum sd_status {
    SD_OK = 0, SD_E_ARGUMENT, SD_E_MODEL, SD_E_SINGULAR, SD_E_MEMORY, SD_E_IO, SD_E_PARSE,
    SD_E_NOT_SUPPORTED, SD_E_SOLVER, SD_E_NOT_FINITE
} sd_status;
typedef struct sd_error { sd_status status; char message[512]; } sd_error;
const char *sd_status_name(sd_status status);
typedef enum sd_hinge_type {
    SD_HINGE_FIXED = 0, SD_HINGE_REVOLUTE, SD_HINGE_PRISMATIC, SD_HINGE_SPHERICAL, SD_HINGE_FREE,
    SD_HINGE_UNIVERSAL, SD_HINGE_PLANAR, SD_HINGE_TYPE_COUNT
} sd_hinge_type;
typedef struct sd_model sd_model;
typedef struct sd_data sd_data;
typedef enum sd_model_format { SD_FORMAT_UNKNOWN = 0, SD_FORMAT_URDF, SD_FORMAT_MJCF, SD_FORMAT_SDF } sd_model_format;
typedef struct sd_load_options { ...; } sd_load_options;
sd_status sd_model_load_file(const char *path, const sd_load_options *options, sd_model **model,
                             sd_model_format *format, sd_error *err);
void sd_model_free(sd_model *model);
sd_model *sd_model_copy(const sd_model *model, sd_error *err);
int sd_model_nbodies(const sd_model *model);
int sd_model_nq(const sd_model *model);
int sd_model_nv(const sd_model *model);
int sd_model_body_index(const sd_model *model, const char *body_name);
int sd_model_joint_index(const sd_model *model, const char *joint_name);
const char *sd_model_body_name(const sd_model *model, int body);
const char *sd_model_joint_name(const sd_model *model, int body);
sd_hinge_type sd_model_hinge(const sd_model *model, int body);
int sd_model_v_index(const sd_model *model, int body);
int sd_model_hinge_nv(const sd_model *model, int body);
void sd_model_gravity(const sd_model *model, double gravity[3]);
double sd_model_body_mass(const sd_model *model, int body);
const double *sd_model_body_com(const sd_model *model, int body);
const double *sd_model_body_inertia(const sd_model *model, int body);
double sd_model_armature(const sd_model *model, int v);
double sd_model_damping(const sd_model *model, int v);
double sd_model_stiffness(const sd_model *model, int v);
double sd_model_spring_ref(const sd_model *model, int v);
int sd_model_body_nmodes(const sd_model *model, int body);
int sd_model_body_nnodes(const sd_model *model, int body);
int sd_model_nconstraints(const sd_model *model);
sd_status sd_model_flex_frequencies(const sd_model *model, int body, double *omega, sd_error *err);
sd_status sd_model_flex_damping_ratios(const sd_model *model, int body, double *zeta, sd_error *err);
sd_status sd_model_set_gravity(sd_model *model, const double gravity[3], sd_error *err);
sd_status sd_model_set_body_inertia(sd_model *model, int body, double mass, const double com[3],
                                    const double inertia[9], sd_error *err);
sd_status sd_model_set_armature(sd_model *model, int v, double armature, sd_error *err);
sd_status sd_model_set_damping(sd_model *model, int v, double damping, sd_error *err);
sd_status sd_model_set_stiffness(sd_model *model, int v, double stiffness, sd_error *err);
sd_status sd_model_set_spring_ref(sd_model *model, int v, double spring_ref, sd_error *err);
sd_status sd_model_set_flex_modes(sd_model *model, int body, const double *omega, const double *zeta,
                                  sd_error *err);
void sd_configuration_reference(const sd_model *model, double *q);
int sd_coordinate_label(const sd_model *model, int i, char *buf, size_t size);
int sd_speed_label(const sd_model *model, int i, char *buf, size_t size);
sd_data *sd_data_new(const sd_model *model);
void sd_data_free(sd_data *data);

typedef enum sd_integrator { SD_INTEGRATOR_RK4 = 0, SD_INTEGRATOR_CVODE_BDF, SD_INTEGRATOR_CVODE_ADAMS } sd_integrator;
sd_status sd_integrator_from_name(const char *name, sd_integrator *integrator);
typedef void (*sd_control_fn)(void *user, double t, const double *q, const double *u, double *tau);
typedef struct sd_sim_options {
    sd_integrator integrator; double t0, duration, dt; int every; double rtol, atol, max_step;
    long max_internal_steps; const double *tau; int sample_energies; ...;
} sd_sim_options;
void sd_sim_options_init(sd_sim_options *options);
typedef struct sd_sim_stats {
    long steps; long rhs_evals; double t_end; double energy_start, energy_end;
    double max_position_residual, max_velocity_residual; ...;
} sd_sim_stats;

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


def _library_location():
    """soadyn/_build.py's rule, loaded by path (importing the package would need its extension)."""
    path = os.path.join(os.path.dirname(HERE), "_build.py")
    spec = importlib.util.spec_from_file_location("_soadyn_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.library_location(), module._split


def make_ffibuilder():
    (include_dirs, library_dirs), split = _library_location()
    rpath = split(os.environ.get("SOADYN_RPATH", "")) or library_dirs
    with open(os.path.join(HERE, "_run.c"), encoding="utf-8") as f:
        source = f.read()
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("soadyn.campaign._run_cffi", source, include_dirs=include_dirs, library_dirs=library_dirs,
                   libraries=["soadyn"], extra_compile_args=["-O2", "-std=c11"],
                   extra_link_args=["-Wl,-rpath," + ":".join(rpath)])
    return ffi


if __name__ == "__main__":
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    make_ffibuilder().compile(tmpdir=out, verbose=False)
