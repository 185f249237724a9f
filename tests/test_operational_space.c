/*
 * tests/test_operational_space.c — 004 Eq 59-60: the operational-space compliance B* Omega B of a
 * few task frames, from the backward-Lyapunov recursions, against J M^-1 J* formed densely from
 * the frames' Jacobians and a Cholesky inverse of M; and the operational-space inertia against
 * the inverse of that dense compliance.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

/* The 6 x nv Jacobian of a task frame: its [omega; v] in its own axes at its origin. */
static void frame_jacobian(const sd_model *m, sd_data *d, const sd_task_frame *f, double *J)
{
    const int nv = sd_model_nv(m);
    double *Jw = malloc(6 * (size_t)nv * 8), Rw[9];
    sd_jacobian_world(m, d, f->body, f->placement.p, Jw);
    sd_m3_mul(world_placement(m, d, f->body).R, f->placement.R, Rw); /* frame axes in world */
    for (int c = 0; c < nv; ++c)
        for (int blk = 0; blk < 2; ++blk) {
            double w[3] = {Jw[(3 * blk) * nv + c], Jw[(3 * blk + 1) * nv + c], Jw[(3 * blk + 2) * nv + c]}, b[3];
            sd_m3t_mul_v(Rw, w, b);
            for (int r = 0; r < 3; ++r) J[(3 * blk + r) * nv + c] = b[r];
        }
    free(Jw);
}

static void check(const sd_model *m, uint64_t *rng, int nframes)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m), N = 6 * nframes;
    sd_data *d = sd_data_new(m);
    sd_task_frame *frames = malloc((size_t)nframes * sizeof *frames);
    double *q = malloc((size_t)(nq + 1) * 8), *M = malloc((size_t)(nv * nv + 1) * 8),
           *J = malloc((size_t)N * nv * 8), *MinvJt = malloc((size_t)N * nv * 8), *ref = malloc((size_t)N * N * 8),
           *Li = malloc((size_t)N * N * 8), *Lam = malloc((size_t)N * N * 8);
    random_state(m, rng, q, NULL, NULL);
    for (int i = 0; i < nframes; ++i) {
        frames[i].body = (int)(sd_random_uniform(rng) * n);
        double w[3], quat[4];
        random_vector(rng, w, 3, 2.0);
        sd_quat_exp(w, quat);
        sd_quat_to_m3(quat, frames[i].placement.R);
        random_vector(rng, frames[i].placement.p, 3, 0.4);
    }
    sd_kinematics(m, d, q, NULL, NULL);
    for (int i = 0; i < nframes; ++i) frame_jacobian(m, d, &frames[i], J + 6 * (size_t)i * nv);
    sd_mass_matrix(m, d, q, M);
    CHECK(sd_cholesky_factor(M, nv, 0.0) < 0);
    for (int r = 0; r < N; ++r) { /* row r of J, solved: (M^-1 J^T) column r */
        double *col = MinvJt + (size_t)r * nv;
        memcpy(col, J + (size_t)r * nv, (size_t)nv * 8);
        sd_cholesky_solve(M, nv, col);
    }
    for (int a = 0; a < N; ++a)
        for (int b = 0; b < N; ++b) {
            double s = 0;
            for (int c = 0; c < nv; ++c) s += J[(size_t)a * nv + c] * MinvJt[(size_t)b * nv + c];
            ref[a * N + b] = s;
        }
    CHECK(sd_operational_space_compliance(m, d, q, nframes, frames, Li) == SD_OK);
    CHECK_ARRAY_CLOSE(Li, ref, N * N, 1e-10, "B* Omega B (004 Lemma 5 recursions) vs J M^-1 J* dense");
    if (nv >= N) { /* enough speeds that the frames can be independent: the inertia is the inverse */
        const sd_status st = sd_operational_space_inertia(m, d, q, nframes, frames, Lam);
        if (st == SD_OK) {
            double *P = malloc((size_t)N * N * 8), *I = calloc((size_t)N * N, 8);
            for (int i = 0; i < N; ++i) I[i * N + i] = 1.0;
            for (int a = 0; a < N; ++a)
                for (int b = 0; b < N; ++b) {
                    double s = 0;
                    for (int c = 0; c < N; ++c) s += Lam[a * N + c] * ref[c * N + b];
                    P[a * N + b] = s;
                }
            double *Lc = malloc((size_t)N * N * 8);
            memcpy(Lc, ref, (size_t)N * N * 8);
            CHECK(sd_cholesky_factor(Lc, N, 0.0) < 0);
            CHECK_ARRAY_CLOSE(P, I, N * N, test_cond_tolerance(1e-10, test_cond_estimate(ref, Lc, N)),
                              "Lambda (J M^-1 J*) vs I");
            free(P); free(I); free(Lc);
        } else {
            CHECK(st == SD_E_SINGULAR); /* frames on a chain too short to move them independently */
        }
    } else {
        CHECK(sd_operational_space_inertia(m, d, q, nframes, frames, Lam) == SD_E_SINGULAR);
    }
    free(frames); free(q); free(M); free(J); free(MinvJt); free(ref); free(Li); free(Lam);
    sd_data_free(d);
}

int main(void)
{
    uint64_t rng = 99;
    const int sizes[] = {1, 2, 5, 10, 30, 100, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int trial = 0; trial < 4; ++trial) {
            sd_model *m = random_tree(&rng, sizes[s], (trial & 1 ? RT_MASSLESS : 0) | (trial & 2 ? RT_FREE_ROOT : 0));
            check(m, &rng, 1 + trial % 3);
            sd_model_free(m);
        }
    return test_summary("test_operational_space");
}
