/*
 * src/model/configuration.c — operations on whole configurations q: neutral, reference (the bodies'
 * sd_body_desc.reference, else neutral), integrate along u on the manifold, difference, normalise,
 * random. Each hinge's part is done by hinge.c. A flexible body's
 * modal coordinates eta (after its hinge's, soadyn/flex.h) are Euclidean: neutral 0, integrated by
 * adding eta-dot dt, their chart coordinates eta itself; they hold no rotation and no quaternion.
 * Given a NULL pointer the functions do nothing (and the ones returning a number return NaN).
 */
#include <math.h>

#include "flex/flex_body.h"
#include "internal.h"

/* Body k's number of modal coordinates (0 for a rigid body or model). */
static int nmodes(const sd_model *m, int k) { return m->n_modes ? m->n_modes[k] : 0; }

void sd_configuration_neutral(const sd_model *m, double *q)
{
    if (!m || !q) return;
    for (int k = 0; k < m->n; ++k) {
        sd_hinge_neutral(m->hinge[k], q + m->q_index[k]);
        for (int r = 0; r < nmodes(m, k); ++r) q[m->mode_q_index[k] + r] = 0.0;
    }
}

void sd_configuration_reference(const sd_model *m, double *q)
{
    if (!m || !q) return;
    sd_configuration_neutral(m, q);
    for (int k = 0; k < m->n; ++k)
        if (m->desc[k].has_reference) /* validated and its quaternion normalised by the builder */
            for (int i = 0; i < sd_hinge_type_nq(m->hinge[k]); ++i) q[m->q_index[k] + i] = m->desc[k].reference[i];
}

void sd_configuration_integrate(const sd_model *m, const double *q, const double *u, double dt, double *q_out)
{
    if (!m || !q || !u || !q_out) return;
    for (int k = 0; k < m->n; ++k) {
        sd_hinge_integrate(m, k, q + m->q_index[k], u + m->v_index[k], dt, q_out + m->q_index[k]);
        for (int r = 0; r < nmodes(m, k); ++r)
            q_out[m->mode_q_index[k] + r] = q[m->mode_q_index[k] + r] + dt * u[m->mode_v_index[k] + r];
    }
}

void sd_configuration_difference(const sd_model *m, const double *q0, const double *q1, double *u)
{
    if (!m || !q0 || !q1 || !u) return;
    for (int k = 0; k < m->n; ++k) {
        sd_hinge_difference(m, k, q0 + m->q_index[k], q1 + m->q_index[k], u + m->v_index[k]);
        for (int r = 0; r < nmodes(m, k); ++r)
            u[m->mode_v_index[k] + r] = q1[m->mode_q_index[k] + r] - q0[m->mode_q_index[k] + r];
    }
}

double sd_configuration_normalize(const sd_model *m, double *q)
{
    if (!m || !q) return NAN;
    double worst = 0.0;
    for (int k = 0; k < m->n; ++k) {
        const double e = sd_hinge_normalize(m->hinge[k], q + m->q_index[k]);
        if (e > worst) worst = e;
    }
    return worst;
}

void sd_configuration_chart_rate(const sd_model *m, const double *delta, const double *u, double *delta_dot)
{
    if (!m || !delta || !u || !delta_dot) return;
    for (int k = 0; k < m->n; ++k) {
        sd_hinge_chart_rate(m, k, delta + m->v_index[k], u + m->v_index[k], delta_dot + m->v_index[k]);
        for (int r = 0; r < nmodes(m, k); ++r) delta_dot[m->mode_v_index[k] + r] = u[m->mode_v_index[k] + r];
    }
}

double sd_configuration_chart_angle(const sd_model *m, const double *delta)
{
    if (!m || !delta) return NAN;
    double worst = 0.0;
    for (int k = 0; k < m->n; ++k) {
        const double a = sd_hinge_chart_angle(m->hinge[k], delta + m->v_index[k]);
        if (a > worst) worst = a;
    }
    return worst;
}

double sd_configuration_quaternion_error(const sd_model *m, const double *q)
{
    if (!m || !q) return NAN;
    double worst = 0.0;
    for (int k = 0; k < m->n; ++k) {
        const double e = sd_hinge_quaternion_error(m->hinge[k], q + m->q_index[k]);
        if (e > worst) worst = e;
    }
    return worst;
}

/* Random modal coordinates with small deflections: each eta_r uniform in +-a_r, a_r chosen so that
 * mode r alone moves no node by more than 5% of the body's size (the largest node distance from the
 * body frame, 1 m if all nodes sit at it) and turns none by more than 0.05 rad. Mass-normalised
 * modes have entries of any scale, so a fixed range of eta would not mean a small deflection. */
static void random_modes(const sd_flex_body *f, uint64_t *rng, double *eta)
{
    const sd_flex_desc *d = sd_flex_body_desc(f);
    const int n = d->n_nodes, nm = d->n_modes;
    double size = 0.0;
    for (int j = 0; j < n; ++j) {
        const double *l0 = d->node_position + 3 * j;
        size = fmax(size, sqrt(l0[0] * l0[0] + l0[1] * l0[1] + l0[2] * l0[2]));
    }
    if (!(size > 0)) size = 1.0;
    for (int r = 0; r < nm; ++r) {
        const double *Pi = d->modes + (size_t)6 * (size_t)n * (size_t)r; /* column r */
        double rot = 0.0, tr = 0.0;
        for (int j = 0; j < n; ++j) {
            const double *P = Pi + 6 * j;
            rot = fmax(rot, sqrt(P[0] * P[0] + P[1] * P[1] + P[2] * P[2]));
            tr = fmax(tr, sqrt(P[3] * P[3] + P[4] * P[4] + P[5] * P[5]));
        }
        double a = HUGE_VAL;
        if (tr > 0) a = fmin(a, 0.05 * size / tr);
        if (rot > 0) a = fmin(a, 0.05 / rot);
        if (a == HUGE_VAL) a = 0.05; /* a mode moving no node: any amplitude is small */
        eta[r] = a * (2.0 * sd_random_uniform(rng) - 1.0);
    }
}

void sd_configuration_random(const sd_model *m, uint64_t *rng, double *q)
{
    if (!m || !rng || !q) return;
    for (int k = 0; k < m->n; ++k) {
        sd_hinge_random(m, k, rng, q + m->q_index[k]);
        if (nmodes(m, k)) random_modes(m->flex[k], rng, q + m->mode_q_index[k]);
    }
}

double sd_random_uniform(uint64_t *rng)
{
    /* xorshift64*: small, fast and reproducible; 53 random bits make the double */
    uint64_t x = *rng ? *rng : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}
