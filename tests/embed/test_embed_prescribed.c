/*
 * tests/embed/test_embed_prescribed.c — prescribed speeds in the embedded forward dynamics
 * (sd_embedded_fd_options.prescribed), against the tree-augmented layer with the same hinges
 * prescribed (sd_closed_loop_options.prescribed, itself checked against the partitioned dense solve
 * by test_loops_prescribed): random trees of every hinge type closed by random constraints of every
 * kind, every constraint embedded or a random subset (the rest tree-augmented), one-speed hinges
 * whose speed is an embedded one prescribed at random, at accelerations the loops can follow (those
 * of the system under other torques). The torques act on the independent speeds only, so that both
 * layers apply the same hinge torques. qdd_tree agrees to 1e-9, and so do the prescribed hinges'
 * forces where every constraint is embedded (see check_case); the prescribed accelerations are
 * returned unchanged.
 */
#include "embed/embed_reference.h"
#include "loops/random_loops.h"
#include "random_tree.h"

static int cases = 0, tau_cases = 0, skipped = 0;
static double worst_qdd = 0.0, worst_tau = 0.0;

static void check_case(const sd_model *m, const char *loops, const double *q0, uint64_t *rng)
{
    const int nv = sd_model_nv(m), nq = sd_model_nq(m), nc = sd_model_nconstraint_rows(m), n = sd_model_nbodies(m);
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.q = q0;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    if (!e) return;
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    const int ne = sd_embedding_nv(e);
    double *q = calloc((size_t)nq, 8), *ut = calloc((size_t)nv, 8), *u = calloc((size_t)ne + 1, 8),
           *G = calloc((size_t)(nc * nv) + 1, 8), *tau_e = calloc((size_t)ne + 1, 8), *tau2 = calloc((size_t)ne + 1, 8),
           *qdd_e = calloc((size_t)ne + 1, 8), *qdd2 = calloc((size_t)ne + 1, 8), *qt_e = calloc((size_t)nv, 8),
           *tau_out_e = calloc((size_t)ne + 1, 8), *tau_t = calloc((size_t)nv, 8), *tau_out_t = calloc((size_t)nv, 8),
           *qdd_t = calloc((size_t)nv, 8);
    unsigned char *pres_e = calloc((size_t)ne + 1, 1), *pres_t = calloc((size_t)n, 1);
    int np = 0;
    CHECK(sd_embedded_close(e, ed, q0, q, NULL) == SD_OK);
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    random_vector(rng, ut, nv, 1.0);
    project_on_nullspace(G, nc, nv, ut);
    sd_embedded_speeds_of_tree(e, ut, u);
    random_vector(rng, tau_e, ne, 1.0);
    random_vector(rng, tau2, ne, 1.0);
    for (int i = 0; i < ne; ++i) { /* one-speed hinges on embedded speeds, prescribed at random */
        const int t = sd_embedding_speed_index(e, i);
        tau_t[t] = tau_e[i];
        for (int k = 0; k < n; ++k)
            if (sd_model_v_index(m, k) == t && sd_model_hinge_nv(m, k) == 1 && sd_random_uniform(rng) < 0.4)
                pres_e[i] = pres_t[k] = 1, ++np;
    }
    if (np == 0 || sd_embedded_forward_dynamics(e, ed, q, u, tau2, NULL, qdd2, NULL, NULL) != SD_OK) {
        ++skipped;
        goto done;
    }
    for (int i = 0; i < ne; ++i) qdd_e[i] = pres_e[i] ? qdd2[i] : 0.0;
    for (int i = 0; i < ne; ++i) qdd_t[sd_embedding_speed_index(e, i)] = qdd_e[i];
    sd_embedded_fd_options fo = {.prescribed = pres_e, .tau_out = tau_out_e};
    const sd_status se = sd_embedded_forward_dynamics(e, ed, q, u, tau_e, NULL, qdd_e, qt_e, &fo);
    sd_closed_loop_options co = {.prescribed = pres_t, .tau_out = tau_out_t};
    const sd_status st = sd_closed_loop_forward_dynamics(m, d, q, ut, tau_t, NULL, qdd_t, NULL, &co);
    if (se != SD_OK || st != SD_OK) {
        if (se != st) fprintf(stderr, "  '%s': embedded %s / tree-augmented %s\n", loops, sd_embedded_error(ed), sd_data_error(d));
        CHECK(se == st);
        ++skipped;
        goto done;
    }
    ++cases;
    for (int i = 0; i < ne; ++i)
        if (pres_e[i]) CHECK(qdd_e[i] == qdd2[i]);
    const double eq = er_rel(qt_e, qdd_t, nv);
    double et = 0.0, scale = 1.0;
    for (int i = 0; i < ne; ++i)
        if (pres_e[i]) {
            const int t = sd_embedding_speed_index(e, i);
            et = fmax(et, fabs(tau_out_e[i] - tau_out_t[t]));
            scale = fmax(scale, fabs(tau_out_t[t]));
        }
    et /= scale;
    /* with tree-augmented rows beside, a prescribed hinge that such a loop also holds shares its
     * force with the loop in a way the motion does not fix: each layer takes the multipliers of
     * least norm over its own rows (the embedded one over the tree-augmented rows only), so the
     * forces are compared where every constraint is embedded */
    if (strcmp(loops, "all") != 0) et = 0.0;
    else ++tau_cases;
    worst_qdd = fmax(worst_qdd, eq);
    worst_tau = fmax(worst_tau, et);
    CHECK(eq < 1e-9 && et < 1e-9);
    if (!(eq < 1e-9 && et < 1e-9)) fprintf(stderr, "  '%s': qdd_tree %.3g, prescribed forces %.3g\n", loops, eq, et);
done:
    free(q); free(ut); free(u); free(G); free(tau_e); free(tau2); free(qdd_e); free(qdd2); free(qt_e); free(tau_out_e);
    free(tau_t); free(tau_out_t); free(qdd_t); free(pres_e); free(pres_t);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
}

int main(void)
{
    uint64_t rng = 0x7e5c41bedULL;
    static int kinds[SD_CONSTRAINT_TYPE_COUNT];
    for (int trial = 0; trial < 160; ++trial) {
        const int n = 3 + trial % 12;
        const int flags = (trial % 3 == 1 ? RT_FREE_ROOT : 0) | (trial % 5 == 3 ? RT_CHAIN : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc((size_t)sd_model_nq(tree) * sizeof *q0);
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, kinds);
        const int nc = m ? sd_model_nconstraints(m) : 0;
        if (nc >= 1) {
            char loops[64] = "all";
            if (nc >= 2 && trial % 2) random_loop_subset(m, &rng, loops, sizeof loops); /* the rest tree-augmented */
            check_case(m, loops, q0, &rng);
        }
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
    printf("cases %d (forces compared in %d; %d skipped: nothing to prescribe, or both layers refuse); worst "
           "relative: qdd_tree %.2g, prescribed forces %.2g\n", cases, tau_cases, skipped, worst_qdd, worst_tau);
    CHECK(cases >= 30 && tau_cases >= 15);
    return test_summary("test_embed_prescribed");
}
