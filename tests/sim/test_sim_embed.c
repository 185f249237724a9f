/*
 * tests/sim/test_sim_embed.c — sd_simulate with sd_sim_options.embed (issue 11): the pieces that
 * tests/embed/test_embed_simulation.c (closure residual and energy over 10 s) does not look at.
 *   - tau_e = N^T tau (sim_embedded_reduce_forces, from X_S) against N^T tau formed column by column
 *     from sd_embedded_tree_speeds of unit vectors, on random trees of every hinge type closed by
 *     random loops of every kind, at random closed configurations, to 1e-12;
 *   - joint forces in the tree's sizes: a constant torque on a joint the embedding makes DEPENDENT
 *     (the four-bar's crank when the split names the coupler) and a control law on the rocker, 0.5 s
 *     of RK4 at 1 ms, embedded vs the tree-augmented run with projection: the same motion (q to 1e-7,
 *     u to 1e-6: the two differ by RK4's own errors in different coordinates, which shrink 16x per
 *     halving of the step: checked by hand, 1e-4 -> 6e-6 -> 3.5e-7 over 2 s);
 *   - every sample: tree sizes, closure residual < 1e-12 (position) and G u < 1e-12 (u = N u_e),
 *     no projection made; the start: a crank rate alone is projected onto G u = 0 (as the tree-
 *     augmented run does) and both runs start from the same state;
 *   - CVODE (BDF and Adams) embedded: residual < 1e-12 at every output, end state = RK4's to 1e-4;
 *   - slider_crank.urdf embedded: residual < 1e-12;
 *   - embed = "none" runs the tree-augmented path (projections made); unknown names are SD_E_ARGUMENT
 *     naming them; a model with one loop embedded and one left tree-augmented (a random tree closed
 *     by two loops): every residual small, projections made for the tree-augmented one.
 * argv[1]: the models folder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/config.h>
#include <soadyn/soadyn.h>

#include "embed/embed_internal.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "sim/sim_internal.h"
#include "test_util.h"

static const char *models;

static sd_model *load(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", models, file);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        CHECK(0);
        return NULL;
    }
    return m;
}

static double max_abs(const double *x, int n)
{
    double v = 0.0;
    for (int i = 0; i < n; ++i) v = fmax(v, fabs(x[i]));
    return v;
}

/* ---------------------------------------------------------------- N^T tau */

static double worst_reduce = 0.0;
static int reduce_cases = 0;

static void check_reduce(const sd_model *m, const sd_embedding *e, const double *q0, uint64_t *rng)
{
    const int nv = sd_model_nv(m), ne = sd_embedding_nv(e);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    double *tau = malloc(sizeof(double) * (size_t)nv), *col = malloc(sizeof(double) * (size_t)nv);
    double *unit = calloc((size_t)ne + 1, sizeof(double)), *fast = malloc(sizeof(double) * (size_t)(ne + 1));
    for (int i = 0; i < nv; ++i) tau[i] = 2.0 * sd_random_uniform(rng) - 1.0;
    double scale = 1.0;
    int ok = 1;
    for (int i = 0; ok && i < ne; ++i) { /* column i of N: the tree speeds of u_e = e_i */
        unit[i] = 1.0;
        ok = sd_embedded_tree_speeds(e, ed, q0, unit, col) == SD_OK;
        unit[i] = 0.0;
        double ref = 0.0;
        for (int j = 0; j < nv; ++j) ref += col[j] * tau[j];
        scale = fmax(scale, max_abs(col, nv));
        fast[i] = ref; /* kept for the comparison below */
    }
    CHECK(ok);
    if (ok) {
        double *ref = malloc(sizeof(double) * (size_t)(ne + 1));
        memcpy(ref, fast, sizeof(double) * (size_t)ne);
        /* X_S of the last evaluation at the same q (the columns above left it there) */
        sim_embedded_reduce_forces(e, ed, tau, fast);
        for (int i = 0; i < ne; ++i) worst_reduce = fmax(worst_reduce, fabs(fast[i] - ref[i]) / scale);
        ++reduce_cases;
        free(ref);
    }
    free(tau);
    free(col);
    free(unit);
    free(fast);
    sd_embedded_data_free(ed);
}

static void test_reduce_random(void)
{
    uint64_t rng = 1126;
    for (int trial = 0; trial < 80; ++trial) {
        const int n = 3 + (int)(sd_random_uniform(&rng) * 10.0);
        const int flags = (trial % 3 == 0 ? RT_CHAIN : 0) | (trial % 4 == 1 ? RT_FREE_ROOT : 0);
        sd_model *tree = random_tree(&rng, n, flags);
        double *q0 = malloc(sizeof(double) * (size_t)sd_model_nq(tree));
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, NULL);
        if (m) {
            sd_embed_options o;
            sd_embed_options_init(&o);
            o.loops = "all";
            o.q = q0;
            sd_error err;
            sd_embedding *e = sd_embedding_new(m, &o, &err);
            if (e) check_reduce(m, e, q0, &rng); /* refusals (a loop that locks its bodies) are test_embed_model's */
            sd_embedding_free(e);
            sd_model_free(m);
        }
        free(q0);
        sd_model_free(tree);
    }
    printf("N^T tau from X_S vs columns of N: %d random closed trees, worst %.3g\n", reduce_cases, worst_reduce);
    CHECK(reduce_cases >= 20);
    CHECK(worst_reduce < 1e-12);
}

/* ---------------------------------------------------------------- runs */

typedef struct watch {
    const sd_model *m;
    sd_data *d;
    double *res;
    double max_pos, max_vel;
    long samples;
} watch;

static int observer(void *user, const sd_sim_sample *s)
{
    watch *w = user;
    const int nc = sd_model_nconstraint_rows(w->m);
    if (sd_constraint_residuals(w->m, w->d, s->q, s->u, w->res, w->res + nc) != SD_OK) return 1;
    w->max_pos = fmax(w->max_pos, max_abs(w->res, nc));
    w->max_vel = fmax(w->max_vel, max_abs(w->res + nc, nc));
    ++w->samples;
    return 0;
}

/* A torque on the rocker pulling it back to 0 (control law in the tree's sizes: rocker is index 2). */
static void rocker_spring(void *user, double t, const double *q, const double *u, double *tau)
{
    (void)user;
    (void)t;
    tau[2] += -0.8 * q[2] - 0.05 * u[2];
}

/* Simulate the four-bar (nv 3) from crank rate 3 for `duration`; q, u the end state. */
static sd_status run_four_bar(const sd_model *m, const char *embed, const char *independent, sd_integrator integ,
                              double duration, double q[3], double u[3], sd_sim_stats *st, watch *w, sd_error *err)
{
    const double tau[3] = {0.3, 0.0, 0.0}; /* on the crank */
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.integrator = integ;
    o.duration = duration;
    o.dt = 1e-3;
    o.tau = tau;
    o.control = rocker_spring;
    o.embed = embed;
    o.independent = independent;
    o.observer = observer;
    o.observer_user = w;
    sd_configuration_reference(m, q);
    u[0] = 3.0;
    u[1] = u[2] = 0.0;
    return sd_simulate(m, &o, q, u, st, err);
}

static void watch_init(watch *w, const sd_model *m)
{
    memset(w, 0, sizeof(*w));
    w->m = m;
    w->d = sd_data_new(m);
    w->res = calloc(2 * (size_t)sd_model_nconstraint_rows(m) + 1, sizeof(double));
}

static void watch_free(watch *w)
{
    sd_data_free(w->d);
    free(w->res);
}

static void test_four_bar(void)
{
    sd_model *m = load("four_bar.urdf");
    if (!m) return;
    double q_ta[3], u_ta[3], q_e[3], u_e[3], q_c[3], u_c[3];
    sd_sim_stats s_ta, s_e, s_c;
    sd_error err;
    watch w_ta, w_e;
    watch_init(&w_ta, m);
    watch_init(&w_e, m);
    CHECK(run_four_bar(m, NULL, NULL, SD_INTEGRATOR_RK4, 0.5, q_ta, u_ta, &s_ta, &w_ta, &err) == SD_OK);
    /* the pivoting's split: is the crank (where the torque acts) dependent? then N^T carries it */
    sd_embed_options eo;
    sd_embed_options_init(&eo);
    eo.loops = "all";
    sd_embedding *e = sd_embedding_new(m, &eo, &err);
    CHECK(e != NULL);
    const int crank_dependent = e && sd_embedding_speed_index(e, 0) != 0;
    sd_embedding_free(e);
    const sd_status st = run_four_bar(m, "all", NULL, SD_INTEGRATOR_RK4, 0.5, q_e, u_e, &s_e, &w_e, &err);
    if (st != SD_OK) fprintf(stderr, "embedded run: %s\n", err.message);
    CHECK(st == SD_OK);
    double dq = 0.0, du = 0.0;
    for (int i = 0; i < 3; ++i) {
        dq = fmax(dq, fabs(q_e[i] - q_ta[i]));
        du = fmax(du, fabs(u_e[i] - u_ta[i]));
    }
    printf("four_bar, torque on the crank (%s) + control on the rocker, 0.5 s RK4 1 ms: embedded vs tree-augmented "
           "end state |dq| %.3g, |du| %.3g; embedded samples %ld, residuals position %.3g velocity %.3g, "
           "projections %ld (tree-augmented: %ld)\n",
           crank_dependent ? "dependent" : "independent", dq, du, w_e.samples, w_e.max_pos, w_e.max_vel,
           s_e.projections, s_ta.projections);
    CHECK(crank_dependent);
    CHECK(dq < 1e-7 && du < 1e-6); /* speeds reach ~20 rad/s */
    CHECK(w_e.samples == 501);
    CHECK(w_e.max_pos < 1e-12 && w_e.max_vel < 1e-12);
    CHECK(s_e.max_position_residual < 1e-12 && s_e.max_velocity_residual < 1e-12);
    CHECK(s_e.projections == 0 && s_ta.projections > 0);
    CHECK(s_e.rhs_evals == 4 * s_e.steps);

    /* CVODE on the embedded system, against the embedded RK4 */
    for (int k = 0; SOADYN_HAS_CVODE && k < 2; ++k) {
        watch w_c;
        watch_init(&w_c, m);
        const sd_integrator integ = k ? SD_INTEGRATOR_CVODE_ADAMS : SD_INTEGRATOR_CVODE_BDF;
        const sd_status sc = run_four_bar(m, "all", NULL, integ, 0.5, q_c, u_c, &s_c, &w_c, &err);
        if (sc != SD_OK) fprintf(stderr, "%s: %s\n", sd_integrator_name(integ), err.message);
        CHECK(sc == SD_OK);
        double dc = 0.0;
        for (int i = 0; i < 3; ++i) dc = fmax(dc, fmax(fabs(q_c[i] - q_e[i]), fabs(u_c[i] - u_e[i])));
        printf("four_bar embedded, %s: end state vs RK4 %.3g, residual %.3g, %ld steps, %ld re-bases\n",
               sd_integrator_name(integ), dc, w_c.max_pos, s_c.steps, s_c.rebases);
        CHECK(dc < 1e-4); /* CVODE at rtol 1e-8 against RK4 at 1 ms, speeds ~20 rad/s */
        CHECK(w_c.max_pos < 1e-12 && w_c.max_vel < 1e-12);
        watch_free(&w_c);
    }

    /* an override split gives the same motion */
    watch w_o;
    watch_init(&w_o, m);
    CHECK(run_four_bar(m, "rocker_pivot", "crank_joint", SD_INTEGRATOR_RK4, 0.5, q_c, u_c, &s_c, &w_o, &err) == SD_OK);
    double d_o = 0.0;
    for (int i = 0; i < 3; ++i) d_o = fmax(d_o, fabs(q_c[i] - q_e[i]));
    printf("four_bar, crank named independent: end q vs the pivoting's split %.3g\n", d_o);
    CHECK(d_o < 1e-7 && w_o.max_pos < 1e-12);
    watch_free(&w_o);

    /* "none": the tree-augmented path; unknown names refused naming them */
    watch w_n;
    watch_init(&w_n, m);
    CHECK(run_four_bar(m, "none", NULL, SD_INTEGRATOR_RK4, 0.1, q_c, u_c, &s_c, &w_n, &err) == SD_OK);
    CHECK(s_c.projections > 0);
    watch_free(&w_n);
    watch_init(&w_n, m);
    CHECK(run_four_bar(m, "no_such_loop", NULL, SD_INTEGRATOR_RK4, 0.1, q_c, u_c, &s_c, &w_n, &err) == SD_E_ARGUMENT);
    CHECK(strstr(err.message, "no_such_loop") != NULL);
    CHECK(run_four_bar(m, "all", "no_such_joint", SD_INTEGRATOR_RK4, 0.1, q_c, u_c, &s_c, &w_n, &err) != SD_OK);
    CHECK(strstr(err.message, "no_such_joint") != NULL);
    watch_free(&w_n);
    watch_free(&w_ta);
    watch_free(&w_e);
    sd_model_free(m);
}

static void test_slider_crank(void)
{
    sd_model *m = load("slider_crank.urdf");
    if (!m) return;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
    sd_configuration_reference(m, q);
    u[0] = 5.0;
    watch w;
    watch_init(&w, m);
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.duration = 1.0;
    o.embed = "all";
    o.observer = observer;
    o.observer_user = &w;
    sd_sim_stats st;
    sd_error err;
    const sd_status s = sd_simulate(m, &o, q, u, &st, &err);
    if (s != SD_OK) fprintf(stderr, "slider_crank: %s\n", err.message);
    CHECK(s == SD_OK);
    printf("slider_crank embedded, 1 s: residuals position %.3g velocity %.3g, energy drift %.3g\n", w.max_pos,
           w.max_vel, (st.energy_end - st.energy_start) / fabs(st.energy_start));
    CHECK(w.max_pos < 1e-12 && w.max_vel < 1e-12 && st.projections == 0);
    watch_free(&w);
    free(q);
    free(u);
    sd_model_free(m);
}

/* One loop embedded, the others tree-augmented: random trees closed by two or more loops. */
static void test_mixed(void)
{
    uint64_t rng = 777;
    int runs = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 60 && runs < 6; ++trial) {
        sd_model *tree = random_tree(&rng, 6 + (int)(sd_random_uniform(&rng) * 6.0), RT_ONLY_1DOF);
        double *q0 = malloc(sizeof(double) * (size_t)sd_model_nq(tree));
        sd_configuration_random(tree, &rng, q0);
        sd_model *m = close_randomly(tree, &rng, q0, NULL);
        if (m && sd_model_nconstraints(m) >= 2) {
            sd_sim_options o;
            sd_sim_options_init(&o);
            o.duration = 0.05;
            o.embed = sd_model_constraint_name(m, 0);
            watch w;
            watch_init(&w, m);
            o.observer = observer;
            o.observer_user = &w;
            const int nv = sd_model_nv(m);
            double *u = calloc((size_t)nv, sizeof(double));
            sd_sim_stats st;
            sd_error err;
            const sd_status s = sd_simulate(m, &o, q0, u, &st, &err);
            if (s == SD_OK) {
                ++runs;
                worst = fmax(worst, fmax(w.max_pos, w.max_vel));
                CHECK(st.projections > 0);
            } else if (s != SD_E_SINGULAR && s != SD_E_ARGUMENT) { /* a loop that cannot be embedded alone */
                fprintf(stderr, "mixed: %s\n", err.message);
                CHECK(0);
            }
            free(u);
            watch_free(&w);
        }
        sd_model_free(m);
        sd_model_free(tree);
        free(q0);
    }
    printf("one loop embedded, the others tree-augmented: %d random runs of 50 ms, worst residual %.3g\n", runs, worst);
    CHECK(runs >= 3);
    CHECK(worst < 1e-9);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_sim_embed MODELS_FOLDER\n");
        return 2;
    }
    models = argv[1];
    test_reduce_random();
    test_four_bar();
    test_slider_crank();
    test_mixed();
    return test_summary("test_sim_embed");
}
