/*
 * tests/embed/test_embed_inverse_mixed.c — the embedded inverse dynamics with constraints left
 * tree-augmented beside the embedded ones (sd_embedded_inverse_dynamics,
 * sd_embedded_constrained_inverse_dynamics), on random trees of every hinge type closed by two to
 * four random constraints of every kind, a random nonempty proper subset embedded. The reference is
 * dense: M_e from the composite nodes (sd_embedded_mass_matrix), C_e (sd_embedded_bias_forces),
 * G_e = G_ta N (the tree's G from sd_constraint_jacobian, N column by column), and the multipliers
 * of minimum norm by a Jacobi pseudo-inverse (loops_oracle.h). At accelerations the embedded
 * forward dynamics produced (so the tree-augmented loops hold):
 *   - every speed driven: tau = M_e qdd + C_e, and the forward dynamics under it returns qdd;
 *   - a random subset driven, the accelerations those speeds' torques produced: tau and lambda_ta
 *     equal the dense minimum-norm solve of G_e,U* lambda = (M_e qdd + C_e)_U, tau = M_e qdd + C_e -
 *     G_e* lambda, zero on the others; where that solve is unique, tau is the torque that made qdd;
 *   - accelerations that break a tree-augmented loop: SD_E_ARGUMENT naming it.
 */
#include "embed/embed_reference.h"
#include "loops/loops_oracle.h"
#include "loops/random_loops.h"
#include "random_tree.h"

static int cases = 0, subset_cases = 0, unique_cases = 0, refusals = 0;
static double worst_all = 0.0, worst_round = 0.0, worst_tau = 0.0, worst_lambda = 0.0, worst_back = 0.0;

static void check_case(const sd_model *m, const char *loops, const double *q0, uint64_t *rng)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.q = q0;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    if (!e) return; /* a split the embedding refuses: test_embed_mixed's business */
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    const int ne = sd_embedding_nv(e);
    int mr = 0, *ta = calloc((size_t)nc + 1, sizeof(int));
    for (int c = 0; c < sd_model_nconstraints(m); ++c)
        if (!sd_embedding_constraint_embedded(e, c))
            for (int i = 0; i < sd_model_constraint_nrows(m, c); ++i) ta[mr++] = sd_model_constraint_row_offset(m, c) + i;
    double *ut = calloc((size_t)nv + 1, 8), *u = calloc((size_t)ne + 1, 8), *G = calloc((size_t)(nc * nv) + 1, 8),
           *N = calloc((size_t)(nv * ne) + 1, 8), *Ge = calloc((size_t)(mr * ne) + 1, 8),
           *M = calloc((size_t)(ne * ne) + 1, 8), *c = calloc((size_t)ne + 1, 8), *fext = calloc(6 * (size_t)nb, 8),
           *tau0 = calloc((size_t)ne + 1, 8), *qdd = calloc((size_t)ne + 1, 8), *tau = calloc((size_t)ne + 1, 8),
           *ref = calloc((size_t)ne + 1, 8), *qdd2 = calloc((size_t)ne + 1, 8), *lam = calloc((size_t)nc + 1, 8),
           *lta = calloc((size_t)mr + 1, 8), *lref = calloc((size_t)mr + 1, 8), *A = calloc((size_t)(mr * mr) + 1, 8),
           *b = calloc((size_t)mr + 1, 8);
    unsigned char *act = calloc((size_t)ne + 1, 1);
    const double *q;
    /* a consistent state: u_tree on null(G) at the closed q, its embedded speeds */
    double *qc = calloc((size_t)sd_model_nq(m), 8);
    CHECK(sd_embedded_close(e, ed, q0, qc, NULL) == SD_OK);
    q = qc;
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    random_vector(rng, ut, nv, 1.0);
    project_on_nullspace(G, nc, nv, ut);
    sd_embedded_speeds_of_tree(e, ut, u);
    random_vector(rng, fext, 6 * nb, 0.5);
    CHECK(er_tree_map(e, ed, q, nv, N));
    for (int i = 0; i < mr; ++i) /* G_e = G_ta N */
        for (int j = 0; j < ne; ++j)
            for (int k = 0; k < nv; ++k) Ge[i * ne + j] += G[ta[i] * nv + k] * N[k * ne + j];
    CHECK(sd_embedded_mass_matrix(e, ed, q, M) == SD_OK);
    CHECK(sd_embedded_bias_forces(e, ed, q, u, fext, c) == SD_OK);
    /* every speed driven */
    random_vector(rng, tau0, ne, 1.0);
    if (sd_embedded_forward_dynamics(e, ed, q, u, tau0, fext, qdd, NULL, NULL) != SD_OK) goto done;
    ++cases;
    CHECK(sd_embedded_inverse_dynamics(e, ed, q, u, qdd, fext, tau) == SD_OK);
    for (int i = 0; i < ne; ++i) {
        ref[i] = c[i];
        for (int j = 0; j < ne; ++j) ref[i] += M[i * ne + j] * qdd[j];
    }
    worst_all = fmax(worst_all, er_rel(tau, ref, ne));
    CHECK_ARRAY_CLOSE(tau, ref, ne, 1e-10, "every speed driven: tau vs M_e qdd + C_e");
    sd_embedded_fd_options fo = {.interbody_forces = 1};
    CHECK(sd_embedded_forward_dynamics(e, ed, q, u, tau, fext, qdd2, NULL, &fo) == SD_OK);
    CHECK(sd_embedded_constraint_forces(e, ed, lam) == SD_OK);
    double lmax = 0.0;
    for (int i = 0; i < mr; ++i) lmax = fmax(lmax, fabs(lam[ta[i]]));
    worst_round = fmax(worst_round, er_rel(qdd2, qdd, ne));
    CHECK_ARRAY_CLOSE(qdd2, qdd, ne, 1e-9, "forward dynamics under the inverse's tau returns qdd");
    CHECK(lmax <= 1e-8 * fmax(1.0, er_maxabs(tau, ne))); /* and the tree-augmented loops carry nothing */
    /* a random subset driven: the accelerations its torques produce */
    int nact = 0;
    for (int v = 0; v < ne; ++v) nact += act[v] = sd_random_uniform(rng) < 0.6;
    for (int v = 0; v < ne; ++v)
        if (!act[v]) tau0[v] = 0.0;
    if (sd_embedded_forward_dynamics(e, ed, q, u, tau0, fext, qdd, NULL, NULL) != SD_OK) goto done;
    for (int i = 0; i < ne; ++i) { /* the dense side: tau_ID, then G_e,U* lambda = tau_ID,U */
        ref[i] = c[i];
        for (int j = 0; j < ne; ++j) ref[i] += M[i * ne + j] * qdd[j];
    }
    for (int a = 0; a < mr; ++a) {
        for (int v = 0; v < ne; ++v)
            if (!act[v]) b[a] += Ge[a * ne + v] * ref[v];
        for (int k = 0; k < mr; ++k)
            for (int v = 0; v < ne; ++v)
                if (!act[v]) A[a * mr + k] += Ge[a * ne + v] * Ge[k * ne + v];
    }
    double cond = 1.0;
    int ambiguous = 0;
    const int rank = oracle_pinv_solve_cond(A, mr, b, lref, 1e-10, 1e-12, &cond, &ambiguous);
    for (int v = 0; v < ne; ++v) {
        for (int a = 0; a < mr; ++a) ref[v] -= Ge[a * ne + v] * lref[a];
        if (!act[v]) ref[v] = 0.0;
    }
    const sd_status st = sd_embedded_constrained_inverse_dynamics(e, ed, q, u, qdd, fext, act, tau, lta);
    CHECK(st == SD_OK);
    if (st != SD_OK) {
        fprintf(stderr, "  refused: %s\n", sd_embedded_error(ed));
        goto done;
    }
    ++subset_cases;
    const double tol = test_cond_tolerance(1e-10, cond * 100.0);
    worst_tau = fmax(worst_tau, er_rel(tau, ref, ne));
    CHECK_ARRAY_CLOSE(tau, ref, ne, tol, "a subset driven: tau vs the dense minimum-norm solve");
    if (!ambiguous) {
        worst_lambda = fmax(worst_lambda, er_rel(lta, lref, mr));
        CHECK_ARRAY_CLOSE(lta, lref, mr, tol, "lambda_ta vs the dense minimum-norm multipliers");
    }
    if (rank == mr && !ambiguous) { /* one answer: the torques that made the motion */
        ++unique_cases;
        worst_back = fmax(worst_back, er_rel(tau, tau0, ne));
        CHECK_ARRAY_CLOSE(tau, tau0, ne, tol, "a subset driven: tau is the torque that produced qdd");
    }
    /* accelerations that break a tree-augmented loop */
    double moved = 0.0;
    for (int v = 0; v < ne; ++v) qdd[v] += 0.5;
    for (int a = 0; a < mr; ++a) {
        double s = 0.0;
        for (int v = 0; v < ne; ++v) s += Ge[a * ne + v] * 0.5;
        moved = fmax(moved, fabs(s));
    }
    if (moved > 1e-3) {
        ++refusals;
        CHECK(sd_embedded_inverse_dynamics(e, ed, q, u, qdd, fext, tau) == SD_E_ARGUMENT);
        CHECK(strstr(sd_embedded_error(ed), "tree-augmented constraints '") != NULL);
    }
done:
    free(qc); free(ta); free(ut); free(u); free(G); free(N); free(Ge); free(M); free(c); free(fext); free(tau0); free(qdd);
    free(tau); free(ref); free(qdd2); free(lam); free(lta); free(lref); free(A); free(b); free(act);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
}

int main(void)
{
    uint64_t rng = 0x1d3e7bedULL;
    static int kinds[SD_CONSTRAINT_TYPE_COUNT];
    for (int trial = 0; trial < 80; ++trial) {
        const int n = 3 + trial % 12;
        const int flags = (trial % 3 == 1 ? RT_FREE_ROOT : 0) | (trial % 5 == 3 ? RT_CHAIN : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof *q0);
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, kinds);
        const int nc = m ? sd_model_nconstraints(m) : 0;
        if (nc >= 2) {
            char loops[64];
            random_loop_subset(m, &rng, loops, sizeof loops);
            check_case(m, loops, q0, &rng);
        }
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
    printf("cases %d (%d with a subset driven, %d of them with one answer, %d refusals of broken loops); worst "
           "relative: every speed driven %.2g, round trip %.2g, subset tau %.2g, lambda %.2g, tau back %.2g\n",
           cases, subset_cases, unique_cases, refusals, worst_all, worst_round, worst_tau, worst_lambda, worst_back);
    CHECK(cases >= 30 && subset_cases >= 30 && unique_cases >= 10 && refusals >= 10);
    return test_summary("test_embed_inverse_mixed");
}
