/*
 * python/soadyn/_helpers.c — the C side of the Python package (compiled by cffi into the extension
 * soadyn._soadyn_cffi, never into libsoadyn). Each sdpy_* runs one algorithm of the C API over n
 * states ("rows") so that a batched Python call crosses into C once: inputs are read at row i from
 * base + i * stride (stride 0: the same array for every row, i.e. broadcast), outputs are written
 * contiguously. They stop at the first failing row, report it in *row and return its status; the
 * message is then the workspace's (sd_data_error). Nothing here allocates or prints.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/derivatives.h>
#include <soadyn/config.h>
#include <soadyn/view.h>

#define SDPY_AT(p, s, i) ((p) ? (p) + (ptrdiff_t)(s) * (i) : NULL)

typedef struct sdpy_strides {
    long q, u, x, f; /* per-row strides of q, u (or the speed-sized second input), x (third), f_ext */
} sdpy_strides;

static sd_status sdpy_forward_dynamics(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
                                       const double *q, const double *u, const double *tau,
                                       const double *f, double *qdd, int cholesky, long *row)
{
    const int nv = sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        const sd_status st = (cholesky ? sd_forward_dynamics_cholesky : sd_forward_dynamics)(
            m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i), SDPY_AT(tau, s->x, i), SDPY_AT(f, s->f, i),
            qdd + (ptrdiff_t)nv * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

static sd_status sdpy_inverse_dynamics(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
                                       const double *q, const double *u, const double *qdd,
                                       const double *f, double *tau, long *row)
{
    const int nv = sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        const sd_status st = qdd ? sd_inverse_dynamics(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                                       SDPY_AT(qdd, s->x, i), SDPY_AT(f, s->f, i),
                                                       tau + (ptrdiff_t)nv * i)
                                 : sd_bias_forces(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                                  SDPY_AT(f, s->f, i), tau + (ptrdiff_t)nv * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* which: 0 M, 1 M^-1, 2 constraint Jacobian G */
static sd_status sdpy_matrix(const sd_model *m, sd_data *d, long n, long sq, const double *q, int which,
                             double *out, long *row)
{
    const ptrdiff_t size = which == 2 ? (ptrdiff_t)sd_model_nconstraint_rows(m) * sd_model_nv(m)
                                      : (ptrdiff_t)sd_model_nv(m) * sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        const double *qi = SDPY_AT(q, sq, i);
        double *o = out + size * i;
        const sd_status st = which == 0 ? sd_mass_matrix(m, d, qi, o)
                           : which == 1 ? sd_mass_matrix_inverse(m, d, qi, o)
                                        : sd_constraint_jacobian(m, d, qi, o);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* det may be NULL (only the log asked for: det M overflows on large trees) */
static sd_status sdpy_determinant(const sd_model *m, sd_data *d, long n, long sq, const double *q, double *det,
                                  double *log_det, long *row)
{
    for (long i = 0; i < n; ++i) {
        const sd_status st = sd_mass_matrix_determinant(m, d, SDPY_AT(q, sq, i), det ? det + i : NULL, log_det + i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* y = M^-1 x (004 Eq 51) at each row's q; or, op >= 0, y = one of the innovations factors applied to x */
static sd_status sdpy_factor_apply(const sd_model *m, sd_data *d, long n, long sq, const double *q, long sx,
                                   const double *x, int op, double *y, long *row)
{
    const int nv = sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_articulated_inertias(m, d, SDPY_AT(q, sq, i));
        if (st == SD_OK)
            st = op < 0 ? sd_mass_matrix_solve(m, d, SDPY_AT(x, sx, i), y + (ptrdiff_t)nv * i)
                        : sd_innovations_apply(m, d, (sd_factor_op)op, SDPY_AT(x, sx, i), y + (ptrdiff_t)nv * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Kinematics at (q, u, qdd) then, per body: world placement R (9), p (3), spatial velocity and
 * acceleration (6 each, body frame; only when u / qdd given). Any output may be NULL. */
static sd_status sdpy_body_states(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
                                  const double *u, const double *qdd, double *R, double *p, double *V,
                                  double *A, long *row)
{
    const int nb = sd_model_nbodies(m);
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_kinematics(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i), SDPY_AT(qdd, s->x, i));
        for (int k = 0; st == SD_OK && k < nb; ++k) {
            const ptrdiff_t b = (ptrdiff_t)nb * i + k;
            sd_transform X;
            st = sd_body_placement_world(m, d, k, &X);
            if (st == SD_OK && R) memcpy(R + 9 * b, X.R, sizeof X.R);
            if (st == SD_OK && p) memcpy(p + 3 * b, X.p, sizeof X.p);
            if (st == SD_OK && V) st = sd_body_velocity(m, d, k, V + 6 * b);
            if (st == SD_OK && A) st = sd_body_acceleration(m, d, k, A + 6 * b);
        }
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* World placements of every model frame (nframes x (R 9, p 3)). */
static sd_status sdpy_frame_placements(const sd_model *m, sd_data *d, long n, long sq, const double *q,
                                       double *R, double *p, long *row)
{
    const int nf = sd_model_nframes(m);
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_kinematics(m, d, SDPY_AT(q, sq, i), NULL, NULL);
        for (int k = 0; st == SD_OK && k < nf; ++k) {
            const ptrdiff_t b = (ptrdiff_t)nf * i + k;
            sd_transform X;
            st = sd_frame_placement_world(m, d, k, &X);
            if (st == SD_OK) { memcpy(R + 9 * b, X.R, sizeof X.R); memcpy(p + 3 * b, X.p, sizeof X.p); }
        }
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* The 6 x nv world Jacobian of a point fixed on a body, at each row's q. */
static sd_status sdpy_jacobian(const sd_model *m, sd_data *d, long n, long sq, const double *q, int body,
                               const double point[3], double *J, long *row)
{
    const ptrdiff_t size = 6 * (ptrdiff_t)sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_kinematics(m, d, SDPY_AT(q, sq, i), NULL, NULL);
        if (st == SD_OK) st = sd_jacobian_world(m, d, body, point, J + size * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Per row: kinetic, gravity potential, spring, strain energies (4), centre of mass (3) and spatial
 * momentum (6), each output may be NULL. */
static sd_status sdpy_energy(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
                             const double *u, double *E, double *com, double *h, long *row)
{
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_kinematics(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i), NULL);
        if (st == SD_OK && E) st = sd_kinetic_energy(m, d, E + 4 * i);
        if (st == SD_OK && E) st = sd_potential_energy(m, d, E + 4 * i + 1);
        if (st == SD_OK && E) st = sd_strain_energy(m, d, E + 4 * i + 3);
        if (st == SD_OK && E) st = sd_spring_energy(m, d, SDPY_AT(q, s->q, i), E + 4 * i + 2);
        if (st == SD_OK && com) st = sd_center_of_mass_world(m, d, com + 3 * i);
        if (st == SD_OK && h) st = sd_spatial_momentum_world(m, d, h + 6 * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

static sd_status sdpy_passive_forces(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
                                     const double *q, const double *u, double *tau, long *row)
{
    const int nv = sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        const sd_status st = sd_passive_forces(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i), tau + (ptrdiff_t)nv * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Inter-body forces of the last call, per body: f (6, in `frame`), the free part H f (hinge nv
 * entries) and the constrained part (6 - nv), each padded with zeros to 6. */
static sd_status sdpy_read_forces(const sd_model *m, sd_data *d, int frame, double *F, double *free_part,
                                  double *constrained)
{
    const int nb = sd_model_nbodies(m);
    for (int k = 0; k < nb; ++k) {
        sd_status st = sd_interbody_force(m, d, k, (sd_force_frame)frame, F + 6 * k);
        if (st == SD_OK && (free_part || constrained)) {
            double a[6] = {0}, c[6] = {0};
            st = sd_constraint_force_components(m, d, k, a, c, NULL);
            if (free_part) memcpy(free_part + 6 * k, a, sizeof a);
            if (constrained) memcpy(constrained + 6 * k, c, sizeof c);
        }
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

/* sd_forward_dynamics_ex over rows: tau_io and qdd_io are per-row copies made by the caller (tau
 * read for free hinges, written for prescribed ones; qdd the other way round); F/free/constrained
 * (nbodies x 6 per row, may be NULL) the inter-body forces (000 Eq 17, 41). */
static sd_status sdpy_forward_dynamics_ex(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
                                          const double *q, const double *u, double *tau_io, const double *f,
                                          double *qdd_io, const unsigned char *prescribed, int frame, double *F,
                                          double *free_part, double *constrained, long *row)
{
    const int nv = sd_model_nv(m);
    const ptrdiff_t nb6 = 6 * (ptrdiff_t)sd_model_nbodies(m);
    sd_fd_options o;
    memset(&o, 0, sizeof o);
    o.interbody_forces = F != NULL;
    o.prescribed = prescribed;
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_forward_dynamics_ex(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                              tau_io + (ptrdiff_t)nv * i, SDPY_AT(f, s->f, i),
                                              qdd_io + (ptrdiff_t)nv * i, &o);
        if (st == SD_OK && F)
            st = sdpy_read_forces(m, d, frame, F + nb6 * i, SDPY_AT(free_part, nb6, i), SDPY_AT(constrained, nb6, i));
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Inter-body forces from Newton-Euler inverse dynamics (004 Alg 3.1) at (q, u, qdd). */
static sd_status sdpy_inverse_dynamics_forces(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
                                              const double *q, const double *u, const double *qdd,
                                              const double *f, double *tau, int frame, double *F,
                                              double *free_part, double *constrained, long *row)
{
    const int nv = sd_model_nv(m);
    const ptrdiff_t nb6 = 6 * (ptrdiff_t)sd_model_nbodies(m);
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_inverse_dynamics(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i), SDPY_AT(qdd, s->x, i),
                                           SDPY_AT(f, s->f, i), tau + (ptrdiff_t)nv * i);
        if (st == SD_OK)
            st = sdpy_read_forces(m, d, frame, F + nb6 * i, SDPY_AT(free_part, nb6, i), SDPY_AT(constrained, nb6, i));
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Closed-loop forward dynamics (000 Eq 45-46) over rows: qdd, lambda (n_c), the cut-joint force of
 * every constraint in `cframe` (nconstraints x 6, may be NULL), the inter-body forces (may be NULL). */
static sd_status sdpy_closed_loop_fd(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
                                     const double *u, const double *tau, const double *f, double *qdd,
                                     double *lambda, int cframe, double *cut, int frame, double *F,
                                     double *free_part, double *constrained, int *rank, long *row)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), ncons = sd_model_nconstraints(m);
    const ptrdiff_t nb6 = 6 * (ptrdiff_t)sd_model_nbodies(m);
    sd_closed_loop_options o;
    memset(&o, 0, sizeof o);
    o.interbody_forces = F != NULL;
    for (long i = 0; i < n; ++i) {
        sd_status st = sd_closed_loop_forward_dynamics(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                                       SDPY_AT(tau, s->x, i), SDPY_AT(f, s->f, i),
                                                       qdd + (ptrdiff_t)nv * i, lambda + (ptrdiff_t)nc * i, &o);
        if (st == SD_OK) rank[i] = sd_closed_loop_rank(d);
        for (int c = 0; st == SD_OK && cut && c < ncons; ++c)
            st = sd_constraint_force(m, d, c, (sd_constraint_frame)cframe, cut + 6 * ((ptrdiff_t)ncons * i + c));
        if (st == SD_OK && F)
            st = sdpy_read_forces(m, d, frame, F + nb6 * i, SDPY_AT(free_part, nb6, i), SDPY_AT(constrained, nb6, i));
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

static sd_status sdpy_constrained_id(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
                                     const double *u, const double *qdd, const double *f,
                                     const unsigned char *actuated, double *tau, double *lambda, long *row)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m);
    for (long i = 0; i < n; ++i) {
        const sd_status st = sd_constrained_inverse_dynamics(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                                             SDPY_AT(qdd, s->x, i), SDPY_AT(f, s->f, i), actuated,
                                                             tau + (ptrdiff_t)nv * i, lambda + (ptrdiff_t)nc * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Position and velocity residuals (n_c each; vel only when u is given). */
static sd_status sdpy_residuals(const sd_model *m, sd_data *d, long n, const sdpy_strides *s, const double *q,
                                const double *u, double *pos, double *vel, long *row)
{
    const int nc = sd_model_nconstraint_rows(m);
    for (long i = 0; i < n; ++i) {
        const sd_status st = sd_constraint_residuals(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                                     pos + (ptrdiff_t)nc * i, vel ? vel + (ptrdiff_t)nc * i : NULL);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

static sd_status sdpy_project_velocities(const sd_model *m, sd_data *d, long n, const sdpy_strides *s,
                                         const double *q, const double *u, double *u_out, long *row)
{
    const int nv = sd_model_nv(m);
    for (long i = 0; i < n; ++i) {
        const sd_status st = sd_project_velocities(m, d, SDPY_AT(q, s->q, i), SDPY_AT(u, s->u, i),
                                                   u_out + (ptrdiff_t)nv * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* Operational-space compliance (inverse = 0) or inertia (inverse = 1) of nframes task frames given as
 * body indices and placements (R 9, p 3 each), 004 Eq 59-60. */
static sd_status sdpy_operational_space(const sd_model *m, sd_data *d, long n, long sq, const double *q,
                                        int nframes, const int *bodies, const double *placements, int inverse,
                                        sd_task_frame *scratch, double *out, long *row)
{
    const ptrdiff_t size = 36 * (ptrdiff_t)nframes * nframes;
    for (int k = 0; k < nframes; ++k) {
        scratch[k].body = bodies[k];
        memcpy(scratch[k].placement.R, placements + 12 * k, 9 * sizeof(double));
        memcpy(scratch[k].placement.p, placements + 12 * k + 9, 3 * sizeof(double));
    }
    for (long i = 0; i < n; ++i) {
        const sd_status st = (inverse ? sd_operational_space_inertia : sd_operational_space_compliance)(
            m, d, SDPY_AT(q, sq, i), nframes, scratch, out + size * i);
        if (st != SD_OK) { *row = i; return st; }
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- simulation */

/* The run's samples, stored by the observer into arrays the Python side allocated for every
 * sample the run can produce. */
typedef struct sdpy_recorder {
    long capacity, count;
    int nq, nv;
    double *t, *q, *u, *kinetic, *potential;
} sdpy_recorder;

static int sdpy_record(void *user, const sd_sim_sample *s)
{
    sdpy_recorder *r = (sdpy_recorder *)user;
    if (r->count >= r->capacity) return 1; /* cannot happen with the capacity computed; stop rather than overrun */
    const long i = r->count++;
    r->t[i] = s->t;
    memcpy(r->q + (ptrdiff_t)r->nq * i, s->q, sizeof(double) * (size_t)r->nq);
    memcpy(r->u + (ptrdiff_t)r->nv * i, s->u, sizeof(double) * (size_t)r->nv);
    r->kinetic[i] = s->kinetic;
    r->potential[i] = s->potential;
    return 0;
}

/* sd_simulate with the recorder as observer; `control` (may be NULL) is the Python callback's C
 * entry, `control_user` its handle. */
static sd_status sdpy_simulate(const sd_model *m, sd_sim_options *o, sd_control_fn control, void *control_user,
                               double *q, double *u, sdpy_recorder *rec, sd_sim_stats *stats, sd_error *err)
{
    o->control = control;
    o->control_user = control_user;
    o->observer = sdpy_record;
    o->observer_user = rec;
    return sd_simulate(m, o, q, u, stats, err);
}

/* ---------------------------------------------------------------- viewer (soadyn/view.h) */

static int sdpy_has_viewer(void)
{
#if defined(SOADYN_HAS_VIEWER) && SOADYN_HAS_VIEWER
    return 1;
#else
    return 0;
#endif
}

/* Build a trajectory from n samples (t, q, u, energies; u and the energies may be NULL) and write
 * the page. */
static sd_status sdpy_write_view(const sd_model *m, long n, const double *t, const double *q, const double *u,
                                 const double *kinetic, const double *potential, const char *model_path,
                                 const char *title, int show_frames, int show_forces, const char *path,
                                 sd_error *err)
{
#if defined(SOADYN_HAS_VIEWER) && SOADYN_HAS_VIEWER
    sd_trajectory *tr = sd_trajectory_new(m);
    if (!tr) { err->status = SD_E_MEMORY; strcpy(err->message, "write_view: out of memory"); return SD_E_MEMORY; }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    sd_status st = SD_OK;
    for (long i = 0; i < n && st == SD_OK; ++i) {
        sd_sim_sample s;
        memset(&s, 0, sizeof s);
        s.t = t[i];
        s.q = q + (ptrdiff_t)nq * i;
        s.u = u ? u + (ptrdiff_t)nv * i : NULL;
        s.kinetic = kinetic ? kinetic[i] : 0.0;
        s.potential = potential ? potential[i] : 0.0;
        st = sd_trajectory_append(tr, &s);
    }
    if (st != SD_OK) {
        err->status = st;
        strcpy(err->message, "write_view: out of memory building the trajectory");
    } else {
        sd_view_options o;
        sd_view_options_init(&o);
        o.model_path = model_path;
        o.title = title;
        o.show_frames = show_frames;
        o.show_forces = show_forces;
        st = sd_view_write_html(m, n > 0 ? tr : NULL, &o, path, err);
    }
    sd_trajectory_free(tr);
    return st;
#else
    (void)m; (void)n; (void)t; (void)q; (void)u; (void)kinetic; (void)potential; (void)model_path; (void)title;
    (void)show_frames; (void)show_forces; (void)path;
    err->status = SD_E_NOT_SUPPORTED;
    strcpy(err->message, "write_view: the viewer is not offered: libsoadyn was built without SOADYN_WITH_VIEWER");
    return SD_E_NOT_SUPPORTED;
#endif
}
