/*
 * src/model/configuration.c — operations on whole configurations q: neutral, integrate along u on the
 * manifold, difference, normalise, random. Each hinge's part is done by hinge.c. Given a NULL
 * pointer they do nothing (and the ones returning a number return NaN).
 */
#include <math.h>

#include "internal.h"

void sd_configuration_neutral(const sd_model *m, double *q)
{
    if (!m || !q) return;
    for (int k = 0; k < m->n; ++k) sd_hinge_neutral(m->hinge[k], q + m->q_index[k]);
}

void sd_configuration_integrate(const sd_model *m, const double *q, const double *u, double dt, double *q_out)
{
    if (!m || !q || !u || !q_out) return;
    for (int k = 0; k < m->n; ++k)
        sd_hinge_integrate(m, k, q + m->q_index[k], u + m->v_index[k], dt, q_out + m->q_index[k]);
}

void sd_configuration_difference(const sd_model *m, const double *q0, const double *q1, double *u)
{
    if (!m || !q0 || !q1 || !u) return;
    for (int k = 0; k < m->n; ++k)
        sd_hinge_difference(m, k, q0 + m->q_index[k], q1 + m->q_index[k], u + m->v_index[k]);
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
    for (int k = 0; k < m->n; ++k)
        sd_hinge_chart_rate(m, k, delta + m->v_index[k], u + m->v_index[k], delta_dot + m->v_index[k]);
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

void sd_configuration_random(const sd_model *m, uint64_t *rng, double *q)
{
    if (!m || !rng || !q) return;
    for (int k = 0; k < m->n; ++k) sd_hinge_random(m, k, rng, q + m->q_index[k]);
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
