/*
 * tests/workspace_read.h — the workspace's readers as values, for tests that read many of them:
 * each checks that the reader succeeded (a failure counts as a failed check and reads as zeros).
 * Include after test_util.h.
 */
#ifndef SOADYN_TEST_WORKSPACE_READ_H
#define SOADYN_TEST_WORKSPACE_READ_H

#include <string.h>

#include <soadyn/soadyn.h>

/* World placement of body k at the last state. */
static inline sd_transform world_placement(const sd_model *m, sd_data *d, int k)
{
    sd_transform X;
    memset(&X, 0, sizeof X);
    CHECK(sd_body_placement_world(m, d, k, &X) == SD_OK);
    return X;
}

static inline double kinetic_energy(const sd_model *m, sd_data *d)
{
    double T = 0.0;
    CHECK(sd_kinetic_energy(m, d, &T) == SD_OK);
    return T;
}

static inline double potential_energy(const sd_model *m, sd_data *d)
{
    double U = 0.0;
    CHECK(sd_potential_energy(m, d, &U) == SD_OK);
    return U;
}

#endif
