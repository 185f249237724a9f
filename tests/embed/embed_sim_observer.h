/*
 * tests/embed/embed_sim_observer.h — the observer the embedded simulation tests of flexible models
 * share: the largest closure residual (from the tree's constraint residuals of each sample's q), the
 * energy drift against the first sample and the largest kinetic energy.
 */
#ifndef SOADYN_TESTS_EMBED_SIM_OBSERVER_H
#define SOADYN_TESTS_EMBED_SIM_OBSERVER_H

#include <math.h>

#include <soadyn/soadyn.h>

typedef struct run {
    const sd_model *m;
    sd_data *d;
    double *pos;
    double max_residual, e0, max_de, max_kinetic, t;
    long samples;
} run;

static inline int observe(void *user, const sd_sim_sample *smp)
{
    run *r = user;
    sd_constraint_residuals(r->m, r->d, smp->q, NULL, r->pos, NULL);
    for (int i = 0; i < sd_model_nconstraint_rows(r->m); ++i) r->max_residual = fmax(r->max_residual, fabs(r->pos[i]));
    const double E = smp->kinetic + smp->potential;
    if (r->samples++ == 0) r->e0 = E;
    r->max_de = fmax(r->max_de, fabs(E - r->e0));
    r->max_kinetic = fmax(r->max_kinetic, smp->kinetic);
    r->t = smp->t;
    return 0;
}

#endif /* SOADYN_TESTS_EMBED_SIM_OBSERVER_H */
