/*
 * tests/io/model_compare.h — compares the dynamics of two models of the same mechanism whose
 * bodies may differ (fixed joints merged in one, kept in the other) and be numbered differently:
 * moving joints are matched by name, then M(q) and the bias forces C(q, u) of both are compared
 * at random states.
 */
#ifndef SOADYN_TEST_MODEL_COMPARE_H
#define SOADYN_TEST_MODEL_COMPARE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <soadyn/dynamics.h>

/* vmap[v of a] = v of b for the same joint; qa -> qb copied joint by joint. Returns 0 if some
 * moving joint of a has no same-named, same-sized joint in b. */
static inline int compare_map_state(const sd_model *a, const sd_model *b, const double *qa, double *qb, int *vmap)
{
    sd_configuration_neutral(b, qb);
    for (int k = 0; k < sd_model_nbodies(a); ++k) {
        const int nq = sd_model_hinge_nq(a, k), nv = sd_model_hinge_nv(a, k);
        if (nv == 0) continue;
        const int kb = sd_model_joint_index(b, sd_model_joint_name(a, k));
        if (kb < 0 || sd_model_hinge_nq(b, kb) != nq || sd_model_hinge_nv(b, kb) != nv) return 0;
        const int qa0 = sd_model_q_index(a, k), qb0 = sd_model_q_index(b, kb);
        const int va0 = sd_model_v_index(a, k), vb0 = sd_model_v_index(b, kb);
        if (qa0 < 0 || qb0 < 0 || va0 < 0 || vb0 < 0) return 0; /* the index readers' -1 for "no such body" */
        for (int i = 0; i < nq; ++i) qb[qb0 + i] = qa[qa0 + i];
        for (int i = 0; i < nv; ++i) vmap[va0 + i] = vb0 + i;
    }
    return 1;
}

/* Largest relative difference of M and C between a and b over `trials` random states;
 * -1 when the models cannot be matched or an algorithm fails. */
static inline double compare_dynamics(const sd_model *a, const sd_model *b, int trials, uint64_t seed)
{
    const int nq = sd_model_nq(a), nv = sd_model_nv(a);
    if (sd_model_nv(b) != nv || sd_model_nq(b) != nq) return -1.0;
    const size_t nvs = nv > 0 ? (size_t)nv : 1;
    double *qa = calloc((size_t)nq + 1, sizeof(double)), *qb = calloc((size_t)nq + 1, sizeof(double));
    double *ua = calloc(nvs, sizeof(double)), *ub = calloc(nvs, sizeof(double));
    double *Ma = calloc(nvs * nvs, sizeof(double)), *Mb = calloc(nvs * nvs, sizeof(double));
    double *ca = calloc(nvs, sizeof(double)), *cb = calloc(nvs, sizeof(double));
    int *vmap = calloc(nvs, sizeof(int));
    sd_data *da = sd_data_new(a), *db = sd_data_new(b);
    double worst = 0.0;
    for (int t = 0; t < trials && worst >= 0.0; ++t) {
        sd_configuration_random(a, &seed, qa);
        for (int i = 0; i < nv; ++i) ua[i] = 2.0 * sd_random_uniform(&seed) - 1.0;
        if (!compare_map_state(a, b, qa, qb, vmap)) { worst = -1.0; break; }
        for (int i = 0; i < nv; ++i) ub[vmap[i]] = ua[i];
        if (sd_mass_matrix(a, da, qa, Ma) != SD_OK || sd_mass_matrix(b, db, qb, Mb) != SD_OK ||
            sd_bias_forces(a, da, qa, ua, NULL, ca) != SD_OK || sd_bias_forces(b, db, qb, ub, NULL, cb) != SD_OK) {
            worst = -1.0;
            break;
        }
        double scale = 1.0, diff = 0.0;
        for (int i = 0; i < nv; ++i) {
            scale = fmax(scale, fmax(fabs(ca[i]), fabs(cb[vmap[i]])));
            diff = fmax(diff, fabs(ca[i] - cb[vmap[i]]));
            for (int j = 0; j < nv; ++j) {
                const double x = Ma[i * nv + j], y = Mb[vmap[i] * nv + vmap[j]];
                scale = fmax(scale, fmax(fabs(x), fabs(y)));
                diff = fmax(diff, fabs(x - y));
            }
        }
        worst = fmax(worst, diff / scale);
    }
    sd_data_free(da);
    sd_data_free(db);
    free(qa); free(qb); free(ua); free(ub); free(Ma); free(Mb); free(ca); free(cb); free(vmap);
    return worst;
}

#endif /* SOADYN_TEST_MODEL_COMPARE_H */
