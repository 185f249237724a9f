"""Build the package's two extensions, used by setup.py (pip) and by CMake (python/CMakeLists.txt):
soadyn._soadyn_cffi (cffi in API mode: compiled against soadyn's headers and linked with
libsoadyn.so; every call but the hottest) and soadyn._fast (_fast.c, written against CPython's and
numpy's C API: single-state forward and inverse dynamics at a few thousand instructions a call).

Where libsoadyn is found (the same rule for both):
  1. SOADYN_INCLUDE_DIRS (os.pathsep-separated; must hold soadyn/soadyn.h and soadyn/config.h) and
     SOADYN_LIBRARY_DIR (holding libsoadyn.so), when set - CMake sets them to its build tree;
  2. otherwise pkg-config's soadyn module (an installed soadyn: `cmake --install`), whose
     PKG_CONFIG_PATH the caller may set.
SOADYN_RPATH (os.pathsep-separated) is the run-time search path written into the extension; by
default the library directory found above, so that the package imports without LD_LIBRARY_PATH.

Command line (for CMake): python3 _build.py OUTPUT_DIR builds both extensions into OUTPUT_DIR.
"""
import os
import shlex
import subprocess
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))

# The library's public declarations (soadyn/soadyn.h), shared with the campaign's extension
# (soadyn/campaign/_build_run.py), then the helpers of _helpers.c this extension compiles.
CDEF_LIBRARY = r"""
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
const char *sd_hinge_type_name(sd_hinge_type type);

typedef struct sd_transform { double R[9]; double p[3]; } sd_transform;
typedef struct sd_model sd_model;
typedef struct sd_data sd_data;
typedef struct sd_task_frame { int body; sd_transform placement; } sd_task_frame;

typedef struct sd_urdf_options { int floating_base; int keep_fixed_joints; int mimic_independent; } sd_urdf_options;
typedef struct sd_sdf_options { int keep_fixed_joints; int fixed_base; const char *model_name; } sd_sdf_options;
typedef struct sd_load_options { sd_urdf_options urdf; sd_sdf_options sdf; } sd_load_options;
typedef enum sd_model_format { SD_FORMAT_UNKNOWN = 0, SD_FORMAT_URDF, SD_FORMAT_MJCF, SD_FORMAT_SDF } sd_model_format;
const char *sd_model_format_name(sd_model_format format);
sd_status sd_model_load_file(const char *path, const sd_load_options *options, sd_model **model,
                             sd_model_format *format, sd_error *err);

void sd_model_free(sd_model *model);

typedef struct sd_compile_options { const char *compiler; const char *flags; const char *cache_dir;
                                    int self_check_states; } sd_compile_options;
typedef struct sd_compile_info { int compiled; int cache_hit; double generate_seconds; double compile_seconds;
                                 double check_seconds; double self_check_error; char key[17]; char path[4096];
                                 char compiler[256]; } sd_compile_info;
sd_status sd_model_compile(sd_model *model, const sd_compile_options *options, sd_error *err);
int sd_model_compiled(const sd_model *model);
void sd_model_uncompile(sd_model *model);
sd_status sd_model_compile_info(const sd_model *model, sd_compile_info *info);
long sd_compile_count(void);
const char *sd_model_name(const sd_model *model);
int sd_model_nbodies(const sd_model *model);
int sd_model_nq(const sd_model *model);
int sd_model_nv(const sd_model *model);
void sd_model_gravity(const sd_model *model, double gravity[3]);
double sd_model_total_mass(const sd_model *model);
int sd_model_body_index(const sd_model *model, const char *body_name);
int sd_model_joint_index(const sd_model *model, const char *joint_name);
const char *sd_model_body_name(const sd_model *model, int body);
const char *sd_model_joint_name(const sd_model *model, int body);
int sd_model_parent(const sd_model *model, int body);
sd_hinge_type sd_model_hinge(const sd_model *model, int body);
int sd_model_q_index(const sd_model *model, int body);
int sd_model_v_index(const sd_model *model, int body);
int sd_model_hinge_nq(const sd_model *model, int body);
int sd_model_hinge_nv(const sd_model *model, int body);
double sd_model_body_mass(const sd_model *model, int body);
const double *sd_model_body_com(const sd_model *model, int body);
const double *sd_model_body_inertia(const sd_model *model, int body);
double sd_model_armature(const sd_model *model, int v);
double sd_model_damping(const sd_model *model, int v);
double sd_model_stiffness(const sd_model *model, int v);
double sd_model_spring_ref(const sd_model *model, int v);
int sd_model_v_body(const sd_model *model, int v);
sd_model *sd_model_copy(const sd_model *model, sd_error *err);
sd_status sd_model_set_gravity(sd_model *model, const double gravity[3], sd_error *err);
sd_status sd_model_set_body_inertia(sd_model *model, int body, double mass, const double com[3],
                                    const double inertia[9], sd_error *err);
sd_status sd_model_set_armature(sd_model *model, int v, double armature, sd_error *err);
sd_status sd_model_set_damping(sd_model *model, int v, double damping, sd_error *err);
sd_status sd_model_set_stiffness(sd_model *model, int v, double stiffness, sd_error *err);
sd_status sd_model_set_spring_ref(sd_model *model, int v, double spring_ref, sd_error *err);
sd_status sd_model_set_flex_modes(sd_model *model, int body, const double *omega, const double *zeta,
                                  sd_error *err);
sd_status sd_model_flex_damping_ratios(const sd_model *model, int body, double *zeta, sd_error *err);
int sd_model_nframes(const sd_model *model);
int sd_model_frame_index(const sd_model *model, const char *frame_name);
const char *sd_model_frame_name(const sd_model *model, int frame);
int sd_model_frame_body(const sd_model *model, int frame);
const sd_transform *sd_model_frame_placement(const sd_model *model, int frame);
const sd_transform *sd_model_placement(const sd_model *model, int body);
size_t sd_model_nwarnings(const sd_model *model);
const char *sd_model_warning(const sd_model *model, size_t i);

void sd_configuration_neutral(const sd_model *model, double *q);
void sd_configuration_reference(const sd_model *model, double *q);
void sd_configuration_integrate(const sd_model *model, const double *q, const double *u, double dt, double *q_out);
void sd_configuration_difference(const sd_model *model, const double *q0, const double *q1, double *u);
double sd_configuration_normalize(const sd_model *model, double *q);
void sd_configuration_random(const sd_model *model, uint64_t *rng, double *q);
double sd_configuration_quaternion_error(const sd_model *model, const double *q);
int sd_coordinate_label(const sd_model *model, int i, char *buf, size_t size);
int sd_speed_label(const sd_model *model, int i, char *buf, size_t size);

sd_data *sd_data_new(const sd_model *model);
void sd_data_free(sd_data *data);
const char *sd_data_error(const sd_data *data);
sd_status sd_forward_dynamics(const sd_model *model, sd_data *data, const double *q, const double *u,
                              const double *tau, const double *f_ext, double *qdd);
sd_status sd_inverse_dynamics(const sd_model *model, sd_data *data, const double *q, const double *u,
                              const double *qdd, const double *f_ext, double *tau);
sd_status sd_external_force_at_point(const sd_model *model, sd_data *data, int body, const double point[3],
                                     const double force[3], double *f_ext);
sd_status sd_kinematics(const sd_model *model, sd_data *data, const double *q, const double *u, const double *qdd);

int sd_model_nconstraints(const sd_model *model);
int sd_model_nconstraint_rows(const sd_model *model);
int sd_model_constraint_index(const sd_model *model, const char *name);
const char *sd_model_constraint_name(const sd_model *model, int constraint);
int sd_model_constraint_nrows(const sd_model *model, int constraint);
int sd_model_constraint_row_offset(const sd_model *model, int constraint);
sd_status sd_constraint_rank(const sd_model *model, sd_data *data, const double *q, int *rank, int *mobility);
sd_status sd_assemble_configuration(const sd_model *model, sd_data *data, const double *q_guess,
                                    const unsigned char *locked, double tol, int max_iter, double *q_out,
                                    double *residual);

typedef struct sd_batch sd_batch;
typedef enum sd_batch_simd { SD_BATCH_SIMD_AUTO = 0, SD_BATCH_SIMD_OFF, SD_BATCH_SIMD_AVX2 } sd_batch_simd;
sd_batch *sd_batch_new(const sd_model *model, int threads, sd_error *err);
void sd_batch_free(sd_batch *batch);
sd_status sd_batch_set_simd(sd_batch *batch, sd_batch_simd mode);
int sd_batch_simd_lanes(const sd_batch *batch);
const char *sd_batch_simd_note(const sd_batch *batch);
const char *sd_batch_error(const sd_batch *batch);
sd_status sd_forward_dynamics_batch(sd_batch *batch, long n, const double *q, const double *u,
                                    const double *tau, const double *f_ext, double *qdd, double *f);
sd_status sd_inverse_dynamics_batch(sd_batch *batch, long n, const double *q, const double *u,
                                    const double *qdd, const double *f_ext, double *tau, double *f);
sd_status sd_mass_matrix_batch(sd_batch *batch, long n, const double *q, double *M);
sd_status sd_forward_dynamics_derivatives(const sd_model *model, sd_data *data, const double *q, const double *u,
    const double *tau, const double *f_ext, double *qdd, double *dqdd_dq, double *dqdd_du, double *dqdd_dtau);
sd_status sd_inverse_dynamics_derivatives(const sd_model *model, sd_data *data, const double *q, const double *u,
    const double *qdd, const double *f_ext, double *tau, double *dtau_dq, double *dtau_du);
sd_status sd_batch_forward_dynamics_derivatives(sd_batch *batch, long n, const double *q, const double *u,
    const double *tau, const double *f_ext, double *qdd, double *dqdd_dq, double *dqdd_du, double *dqdd_dtau);
sd_status sd_batch_inverse_dynamics_derivatives(sd_batch *batch, long n, const double *q, const double *u,
    const double *qdd, const double *f_ext, double *tau, double *dtau_dq, double *dtau_du);
sd_status sd_mass_matrix_inverse_batch(sd_batch *batch, long n, const double *q, double *Minv);

int sd_model_nflexible(const sd_model *model);
int sd_model_body_nmodes(const sd_model *model, int body);
int sd_model_body_nnodes(const sd_model *model, int body);
int sd_model_mode_q_index(const sd_model *model, int body);
int sd_model_mode_v_index(const sd_model *model, int body);
int sd_model_parent_node(const sd_model *model, int body);
sd_status sd_model_flex_frequencies(const sd_model *model, int body, double *omega, sd_error *err);
sd_status sd_model_node_deflection(const sd_model *model, int body, int node, const double *q,
                                   double deflection[6], sd_error *err);

typedef enum sd_integrator { SD_INTEGRATOR_RK4 = 0, SD_INTEGRATOR_CVODE_BDF, SD_INTEGRATOR_CVODE_ADAMS,
    SD_INTEGRATOR_RADAU_IIA } sd_integrator;
sd_status sd_integrator_from_name(const char *name, sd_integrator *integrator);
typedef enum sd_sim_jacobian { SD_SIM_JACOBIAN_AUTO = 0, SD_SIM_JACOBIAN_ANALYTIC, SD_SIM_JACOBIAN_DQ } sd_sim_jacobian;
sd_status sd_sim_jacobian_from_name(const char *name, sd_sim_jacobian *jacobian);
const char *sd_sim_jacobian_name(sd_sim_jacobian jacobian);
typedef void (*sd_control_fn)(void *user, double t, const double *q, const double *u, double *tau);
typedef struct sd_sim_options {
    sd_integrator integrator; double t0; double duration; double dt; int every; double rtol, atol;
    double max_step; long max_internal_steps; const double *tau; int project_constraints;
    int sample_energies; sd_sim_jacobian jacobian; ...;
} sd_sim_options;
void sd_sim_options_init(sd_sim_options *options);
typedef enum sd_stop_reason { SD_STOP_NONE = 0, SD_STOP_FLAG, SD_STOP_OBSERVER } sd_stop_reason;
typedef struct sd_sim_stats {
    long steps; long rhs_evals; long rebases; double t_end; sd_stop_reason stop_reason;
    double energy_start, energy_end; double max_quat_norm_error;
    double max_position_residual, max_velocity_residual; long projections;
    long jacobian_evals; sd_sim_jacobian jacobian;
    double momentum_start[6], momentum_end[6];
} sd_sim_stats;
"""

CDEF_HELPERS = r"""
typedef struct sdpy_strides { long q, u, x, f; } sdpy_strides;
sd_status sdpy_forward_dynamics(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, const double *tau, const double *f, double *qdd, int cholesky, long *row);
sd_status sdpy_inverse_dynamics(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, const double *qdd, const double *f, double *tau, long *row);
sd_status sdpy_matrix(const sd_model *m, sd_data *d, long n, long sq, const double *q, int which, double *out, long *row);
sd_status sdpy_determinant(const sd_model *m, sd_data *d, long n, long sq, const double *q, double *det,
    double *log_det, long *row);
sd_status sdpy_factor_apply(const sd_model *m, sd_data *d, long n, long sq, const double *q, long sx,
    const double *x, int op, double *y, long *row);
sd_status sdpy_body_states(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, const double *qdd, double *R, double *p, double *V, double *A, long *row);
sd_status sdpy_frame_placements(const sd_model *m, sd_data *d, long n, long sq, const double *q, double *R,
    double *p, long *row);
sd_status sdpy_jacobian(const sd_model *m, sd_data *d, long n, long sq, const double *q, int body,
    const double point[3], double *J, long *row);
sd_status sdpy_energy(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, double *E, double *com, double *h, long *row);
sd_status sdpy_passive_forces(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, double *tau, long *row);
sd_status sdpy_forward_dynamics_ex(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
    const double *q, const double *u, double *tau_io, const double *f, double *qdd_io,
    const unsigned char *prescribed, int frame, double *F, double *free_part, double *constrained, long *row);
sd_status sdpy_inverse_dynamics_forces(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
    const double *q, const double *u, const double *qdd, const double *f, double *tau, int frame, double *F,
    double *free_part, double *constrained, long *row);
sd_status sdpy_closed_loop_fd(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, const double *tau, const double *f, double *qdd, double *lambda, int cframe, double *cut,
    int frame, double *F, double *free_part, double *constrained, int *rank, long *row);
sd_status sdpy_constrained_id(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, const double *qdd, const double *f, const unsigned char *actuated, double *tau,
    double *lambda, long *row);
sd_status sdpy_residuals(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
    const double *u, double *pos, double *vel, long *row);
sd_status sdpy_project_velocities(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
    const double *q, const double *u, double *u_out, long *row);
sd_status sdpy_operational_space(const sd_model *m, sd_data *d, long n, long sq, const double *q, int nframes,
    const int *bodies, const double *placements, int inverse, sd_task_frame *scratch, double *out, long *row);
typedef struct sdpy_recorder {
    long capacity, count; int nq, nv; double *t, *q, *u, *kinetic, *potential;
} sdpy_recorder;
sd_status sdpy_simulate(const sd_model *m, sd_sim_options *o, sd_control_fn control, void *control_user,
    double *q, double *u, sdpy_recorder *rec, sd_sim_stats *stats, sd_error *err);
int sdpy_has_viewer(void);
sd_status sdpy_write_view(const sd_model *m, long n, const double *t, const double *q, const double *u,
    const double *kinetic, const double *potential, const char *model_path, const char *title,
    int show_frames, int show_forces, const char *path, sd_error *err);

extern "Python" void sdpy_control_callback(void *user, double t, const double *q, const double *u, double *tau);
"""

CDEF = CDEF_LIBRARY + CDEF_HELPERS


def _split(value):
    return [p for p in value.split(os.pathsep) if p]


def library_location():
    """(include_dirs, library_dirs) of libsoadyn by the rule in this module's docstring."""
    inc, lib = os.environ.get("SOADYN_INCLUDE_DIRS"), os.environ.get("SOADYN_LIBRARY_DIR")
    if inc and lib:
        return _split(inc), [lib]
    try:
        cflags = subprocess.run(["pkg-config", "--cflags-only-I", "soadyn"], check=True, capture_output=True,
                                text=True).stdout
        libs = subprocess.run(["pkg-config", "--libs-only-L", "soadyn"], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError("soadyn's Python package needs libsoadyn: set SOADYN_INCLUDE_DIRS and "
                           "SOADYN_LIBRARY_DIR, or make `pkg-config soadyn` find an installed soadyn "
                           "(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig)") from exc
    incs = [f[2:] for f in shlex.split(cflags) if f.startswith("-I")]
    libdirs = [f[2:] for f in shlex.split(libs) if f.startswith("-L")]
    if not libdirs:  # a system prefix: pkg-config leaves out -L/usr/lib
        libdirs = [subprocess.run(["pkg-config", "--variable=libdir", "soadyn"], check=True, capture_output=True,
                                  text=True).stdout.strip()]
    return incs, libdirs


def _rpath(library_dirs):
    return _split(os.environ.get("SOADYN_RPATH", "")) or library_dirs


def fast_extension(source="soadyn/_fast.c"):
    """The setuptools Extension soadyn._fast of `source` (setup.py's path relative to python/, as
    setuptools demands; build_fast gives it whole)."""
    import numpy
    from setuptools import Extension
    include_dirs, library_dirs = library_location()
    return Extension("soadyn._fast", [source], include_dirs=include_dirs + [numpy.get_include()],
                     library_dirs=library_dirs, libraries=["soadyn"], extra_compile_args=["-O2", "-std=c11"],
                     extra_link_args=["-Wl,-rpath," + ":".join(_rpath(library_dirs))])


def build_fast(out):
    """Compile soadyn._fast into OUTPUT_DIR/soadyn (the command-line build of CMake)."""
    import tempfile
    from setuptools import Distribution
    from setuptools.command.build_ext import build_ext
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        cmd = build_ext(Distribution({"ext_modules": [fast_extension(os.path.join(HERE, "_fast.c"))]}))
        cmd.build_lib, cmd.build_temp = out, tmp
        cmd.ensure_finalized()
        cmd.run()


def make_ffibuilder():
    include_dirs, library_dirs = library_location()
    rpath = _rpath(library_dirs)
    with open(os.path.join(HERE, "_helpers.c"), encoding="utf-8") as f:
        helpers = f.read()
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("soadyn._soadyn_cffi", helpers, include_dirs=include_dirs, library_dirs=library_dirs,
                   libraries=["soadyn"], extra_compile_args=["-O2", "-std=c11"],
                   extra_link_args=["-Wl,-rpath," + ":".join(rpath)])
    return ffi


if __name__ == "__main__":
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    make_ffibuilder().compile(tmpdir=out, verbose=False)
    build_fast(out)
