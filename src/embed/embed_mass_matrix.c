/*
 * src/embed/embed_mass_matrix.c — the public embedded mass matrix, inverse dynamics and bias forces:
 * the argument checks, then the tree's own sweeps projected on the embedded speeds
 * (embed_projected.c; src/embed runs no composite-body or Newton-Euler sweep of its own), then, for
 * the constrained inverse dynamics, the tree-augmented rows beside (embed_mixed.c).
 */
#include "embed/embed_internal.h"

/* ---------------------------------------------------------------- shared pieces */

/* The checks every call here starts with: the embedding and its workspace made for each other,
 * q given, and the inputs finite (ed->tree's error names the argument and its index). */
static sd_status check_call(const sd_embedding *e, sd_embedded_data *ed, const char *fn, const double *q,
                            const double *u, const double *qdd, const double *f_ext, const double *out)
{
    if (!e || !ed) return SD_E_ARGUMENT;
    if (ed->e != e) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: the workspace belongs to another embedding", fn);
    if (!q) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL q", fn);
    if (!out) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL output", fn);
    const sd_model *m = e->model;
    sd_status st;
    if ((st = sd_check_input(ed->tree, fn, "q", q, m->nq)) != SD_OK) return st;
    if ((st = sd_check_input(ed->tree, fn, "u", u, e->nv)) != SD_OK) return st;
    if ((st = sd_check_input(ed->tree, fn, "qdd", qdd, e->nv)) != SD_OK) return st;
    return sd_check_input(ed->tree, fn, "f_ext", f_ext, 6 * m->n);
}

/* M_e = N^T M_tree N (embed_projected.c). */
sd_status sd_embedded_mass_matrix(const sd_embedding *e, sd_embedded_data *ed, const double *q, double *M)
{
    const char *fn = "sd_embedded_mass_matrix";
    sd_status st = check_call(e, ed, fn, q, NULL, NULL, NULL, M);
    if (st != SD_OK || (st = sd_embed_projected_mass_matrix(e, ed, q, M)) != SD_OK) return st;
    if (sd_all_finite(M, (size_t)e->nv * (size_t)e->nv)) return SD_OK;
    return sd_check_output(ed->tree, fn, "M", M, (size_t)e->nv * (size_t)e->nv, SD_CAUSE_OVERFLOW);
}

/* tau = N^T tau_tree(q, N u, N qdd + Xdot_S u) (embed_projected.c); qdd NULL: the bias forces. */
static sd_status inverse_dynamics(const char *fn, const char *out, const sd_embedding *e, sd_embedded_data *ed,
                                  const double *q, const double *u, const double *qdd, const double *f_ext,
                                  double *tau)
{
    sd_status st = check_call(e, ed, fn, q, u, qdd, f_ext, tau);
    if (st != SD_OK) return st;
    if ((st = sd_embed_projected_inverse_dynamics(e, ed, q, u, qdd, f_ext, tau)) != SD_OK) return st;
    if (sd_all_finite(tau, (size_t)e->nv)) return SD_OK;
    return sd_check_output(ed->tree, fn, out, tau, (size_t)e->nv, SD_CAUSE_OVERFLOW);
}

/* The projected inverse dynamics, then the tree-augmented rows (embed_mixed.c). */
static sd_status constrained_inverse(const sd_embedding *e, sd_embedded_data *ed, const double *q, const double *u,
                                     const double *qdd, const double *f_ext, const unsigned char *actuated,
                                     int all_actuated, double *tau, double *lambda_ta)
{
    const char *fn = "sd_embedded_inverse_dynamics";
    if (!qdd && e && ed) return sd_data_fail(ed->tree, SD_E_ARGUMENT, "%s: NULL qdd", fn);
    sd_status st = inverse_dynamics(fn, "tau", e, ed, q, u, qdd, f_ext, tau);
    if (st != SD_OK || (all_actuated && !ed->mixed)) return st;
    if ((st = sd_embed_mixed_inverse(e, ed, qdd, actuated, all_actuated, tau, lambda_ta)) != SD_OK) return st;
    return sd_check_output(ed->tree, fn, "tau", tau, (size_t)e->nv, SD_CAUSE_OVERFLOW);
}

sd_status sd_embedded_inverse_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                       const double *u, const double *qdd, const double *f_ext, double *tau)
{
    return constrained_inverse(e, ed, q, u, qdd, f_ext, NULL, 1, tau, NULL);
}

sd_status sd_embedded_constrained_inverse_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                                   const double *u, const double *qdd, const double *f_ext,
                                                   const unsigned char *actuated, double *tau, double *lambda_ta)
{
    return constrained_inverse(e, ed, q, u, qdd, f_ext, actuated, 0, tau, lambda_ta);
}

/* The bias forces C (tau at qdd = 0). Tree-augmented constraints, when some are left, add no force
 * here: C is the embedded system's own, as sd_bias_forces is the tree's without its loops. */
sd_status sd_embedded_bias_forces(const sd_embedding *e, sd_embedded_data *ed, const double *q, const double *u,
                                  const double *f_ext, double *c)
{
    return inverse_dynamics("sd_embedded_bias_forces", "c", e, ed, q, u, NULL, f_ext, c);
}
