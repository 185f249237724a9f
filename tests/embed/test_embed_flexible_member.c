/*
 * tests/embed/test_embed_flexible_member.c — a flexible body INSIDE an embedded loop (an aggregate's
 * member with its modal coordinates among the aggregate's own: embed_nodes.c, embed_node_model.c's
 * flexible_member_terms, embed_closure.c's modal columns).
 *
 * Models: models/flexible_four_bar.urdf (the crank-rocker whose coupler is a 2-mode beam, the
 * rocker riding on its tip node, the loop cut at O4), and random variants of it: the coupler with
 * 1-4 modes, a random stiffness and damping, a tip body riding on a random node of the coupler
 * (a child of a flexible member outside the loop, on a node) and a rigid weight on the rocker.
 *
 * 1. Embedded (every loop) vs tree-augmented (sd_closed_loop_forward_dynamics: G M^-1 G* on the
 *    tree, the independent computation) at random closed states with random modal coordinates and
 *    rates, tree forces on the independent speeds and external forces: qdd_tree, every body's
 *    acceleration and inter-body force, the multipliers and the constraint force, to 1e-10
 *    relative; the embedding's speeds = the tree-augmented mobility (sd_constraint_rank), the modal
 *    speeds among the independent ones.
 * 2. 10 s of sd_simulate embedded, no projection, flexible_four_bar without modal damping: the loop
 *    closed to <= 1e-12 at every sample, the energy (kinetic, gravity, strain) kept to RK4's accuracy.
 *    The embedded M_e, C_e and ID (the tree's projected): M_e qdd + C_e = tau_e = ID(qdd), M_e M_e^-1 = I.
 * 3. What stays refused says why: a beam bending out of the mechanism's plane (planes="xy"), whose
 *    modes the loop constrains (a modal coordinate would have to be dependent).
 * Fails before the flexible member: sd_embedding_new refused flexible_four_bar ("is flexible").
 *
 *   test_embed_flexible_member <models folder>
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "embed_sim_observer.h"
#include "test_util.h"

#define TOL 1e-10

/* text with the first occurrence of `from` replaced by `to` (a new string; NULL when absent) */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) return NULL;
    const size_t size = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(size);
    if (out) snprintf(out, size, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static sd_model *load_string(const char *xml, const char *name)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_string(xml, strlen(xml), name, NULL, &m, &err) != SD_OK) fprintf(stderr, "%s: %s\n", name, err.message);
    return m;
}

static double uniform(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

/* flexible_four_bar.urdf with the coupler's beam line replaced and `extra` before </robot>. */
static sd_model *variant(const char *base, const char *beam, const char *extra, const char *name)
{
    const char *old_beam = "EI=\"50\" mass_per_length=\"2.857142857142857\" elements=\"8\" modes=\"2\"\n"
                           "            boundary=\"cantilever\" planes=\"xz\" damping_ratio=\"0.02\"/>";
    char *a = replace(base, old_beam, beam);
    char *b = a ? replace(a, "</robot>", extra) : NULL;
    sd_model *m = b ? load_string(b, name) : NULL;
    free(a);
    free(b);
    return m;
}

/* A random variant: the coupler with 1-4 modes, a random EI and damping, a tip body on a random
 * inner node of the coupler (a flexible member's child outside the loop) and a weight on the rocker. */
static sd_model *random_variant(const char *base, unsigned *rng, int *modes)
{
    *modes = 1 + (int)(2.0 * (uniform(rng) + 1.0)) % 4;
    char beam[256], extra[2048], name[64];
    snprintf(beam, sizeof beam,
             "EI=\"%.4g\" mass_per_length=\"2.857142857142857\" elements=\"8\" modes=\"%d\"\n            boundary=\"cantilever\" planes=\"xz\" damping_ratio=\"%.3g\"/>",
             60.0 + 25.0 * uniform(rng), *modes, 0.03 * (uniform(rng) + 1.0));
    const int node = 3 + (int)(2.0 * (uniform(rng) + 1.0)) % 5;
    snprintf(extra, sizeof extra,
             "  <joint name=\"tip_joint\" type=\"continuous\">\n"
             "    <parent link=\"coupler\"/><child link=\"tip\"/>\n"
             "    <soadyn:node index=\"%d\"/>\n"
             "    <origin xyz=\"%.6f 0 0\" rpy=\"%.3f %.3f 0\"/><axis xyz=\"%.3f 1 %.3f\"/>\n"
             "  </joint>\n"
             "  <link name=\"tip\">\n"
             "    <inertial><origin xyz=\"0.02 0.01 %.3f\"/><mass value=\"%.3f\"/>\n"
             "      <inertia ixx=\"3e-5\" ixy=\"0\" ixz=\"0\" iyy=\"2e-5\" iyz=\"0\" izz=\"1e-5\"/></inertial>\n"
             "  </link>\n"
             "  <joint name=\"weight_joint\" type=\"continuous\">\n"
             "    <parent link=\"rocker\"/><child link=\"weight\"/>\n"
             "    <origin xyz=\"0.2 0 0\" rpy=\"0.2 0 0.1\"/><axis xyz=\"1 0 0\"/>\n"
             "  </joint>\n"
             "  <link name=\"weight\">\n"
             "    <inertial><origin xyz=\"0 0.03 0\"/><mass value=\"%.3f\"/>\n"
             "      <inertia ixx=\"4e-5\" ixy=\"0\" ixz=\"0\" iyy=\"3e-5\" iyz=\"0\" izz=\"2e-5\"/></inertial>\n"
             "  </link>\n"
             "</robot>",
             node, 0.35 * node / 8.0, 0.4 * uniform(rng), 0.3 * uniform(rng), 0.5 * uniform(rng), 0.5 * uniform(rng),
             0.02 * uniform(rng), 0.1 + 0.05 * (uniform(rng) + 1.0), 0.2 + 0.1 * (uniform(rng) + 1.0));
    snprintf(name, sizeof name, "flexible_four_bar_%d_modes", *modes);
    return variant(base, beam, extra, name);
}

static double rel(const double *a, const double *b, int n)
{
    double d = 0.0, s = 0.0;
    for (int i = 0; i < n; ++i) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fmax(fabs(a[i]), fabs(b[i])));
    }
    return d / fmax(s, 1e-300);
}

/* 1. embedded = tree-augmented at random closed states; returns the number of states compared. */
static int compare_states(const sd_model *m, unsigned seed, double worst[5])
{
    sd_error err;
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = "all";
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "%s not embedded: %s\n", sd_model_name(m), err.message);
        return 0;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nb = sd_model_nbodies(m), ne = sd_embedding_nv(e);
    const int nc = sd_model_nconstraint_rows(m), ncons = sd_model_nconstraints(m);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)nq, sizeof *q), *u0 = calloc((size_t)nv, sizeof *u0), *ut = calloc((size_t)nv, sizeof *ut);
    double *ue = calloc((size_t)ne, sizeof *ue), *tau_e = calloc((size_t)ne, sizeof *tau_e), *tau_t = calloc((size_t)nv, sizeof *tau_t);
    double *qdd_ta = calloc((size_t)nv, sizeof *qdd_ta), *qdd_t = calloc((size_t)nv, sizeof *qdd_t), *qdd_e = calloc((size_t)ne, sizeof *qdd_e);
    double *lam_ta = calloc((size_t)nc, sizeof *lam_ta), *lam_e = calloc((size_t)nc, sizeof *lam_e);
    double *f_ext = calloc(6 * (size_t)nb, sizeof *f_ext);
    double *f_ta = calloc(6 * (size_t)nb, sizeof *f_ta), *f_e = calloc(6 * (size_t)nb, sizeof *f_e);
    double *a_ta = calloc(6 * (size_t)nb, sizeof *a_ta), *a_e = calloc(6 * (size_t)nb, sizeof *a_e);
    double *cf_ta = calloc(6 * (size_t)ncons, sizeof *cf_ta), *cf_e = calloc(6 * (size_t)ncons, sizeof *cf_e);
    int *indep = calloc((size_t)nv + 1, sizeof *indep);
    double *Me = calloc((size_t)ne * (size_t)ne, sizeof *Me), *Mi = calloc((size_t)ne * (size_t)ne, sizeof *Mi);
    double *ce = calloc((size_t)ne, sizeof *ce), *tid = calloc((size_t)ne, sizeof *tid), worst_m = 0.0;
    unsigned rng = seed;
    int states = 0;
    /* the modal speeds are independent: every one of the coupler's is among the aggregate's own */
    const int coupler = sd_model_body_index(m, "coupler");
    const int nind = sd_embedding_aggregate_independent(e, 0, indep);
    int modal_independent = 0;
    for (int i = 0; i < nind; ++i) modal_independent += indep[i] >= sd_model_mode_v_index(m, coupler);
    CHECK(modal_independent == sd_model_body_nmodes(m, coupler));
    for (int trial = 0; trial < 12; ++trial) {
        sd_configuration_neutral(m, q);
        for (int i = 0; i < nq; ++i) q[i] += 0.3 * uniform(&rng); /* hinges and modal coordinates */
        double res = 1.0;
        if (sd_embedded_close(e, ed, q, q, &res) != SD_OK || !(res < 1e-12)) continue;
        int rank = -1, mobility = -1;
        CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
        CHECK(mobility == ne);
        for (int i = 0; i < nv; ++i) u0[i] = uniform(&rng);
        CHECK(sd_project_velocities(m, d, q, u0, ut) == SD_OK);
        sd_embedded_speeds_of_tree(e, ut, ue);
        CHECK(sd_embedded_tree_speeds(e, ed, q, ue, ut) == SD_OK);
        memset(tau_t, 0, (size_t)nv * sizeof *tau_t);
        for (int i = 0; i < ne; ++i) tau_t[sd_embedding_speed_index(e, i)] = tau_e[i] = uniform(&rng);
        for (int i = 0; i < 6 * nb; ++i) f_ext[i] = 0.3 * uniform(&rng);

        sd_closed_loop_options copt = {.interbody_forces = 1};
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, ut, tau_t, f_ext, qdd_ta, lam_ta, &copt) == SD_OK);
        sd_embedded_fd_options eopt = {.interbody_forces = 1};
        const sd_status st = sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, f_ext, qdd_e, qdd_t, &eopt);
        CHECK(st == SD_OK);
        if (st != SD_OK) {
            fprintf(stderr, "%s: %s\n", sd_model_name(m), sd_embedded_error(ed));
            break;
        }
        sd_data *td = sd_embedded_tree_data(ed);
        for (int k = 0; k < nb; ++k) {
            CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, f_ta + 6 * k) == SD_OK);
            CHECK(sd_body_acceleration(m, d, k, a_ta + 6 * k) == SD_OK);
            CHECK(sd_interbody_force(m, td, k, SD_FRAME_BODY, f_e + 6 * k) == SD_OK);
            CHECK(sd_body_acceleration(m, td, k, a_e + 6 * k) == SD_OK);
        }
        CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
        for (int c = 0; c < ncons; ++c) {
            CHECK(sd_constraint_force(m, d, c, SD_CONSTRAINT_FRAME_WORLD, cf_ta + 6 * c) == SD_OK);
            CHECK(sd_constraint_force(m, td, c, SD_CONSTRAINT_FRAME_WORLD, cf_e + 6 * c) == SD_OK);
        }
        /* M_e and C_e (the tree's projected, embed_projected.c): M_e qdd_e + C_e = tau_e, M_e M_e^-1 = I
         * (M_e^-1 from the node model's factors, an independent path), ID(qdd_e) = tau_e */
        CHECK(sd_embedded_mass_matrix(e, ed, q, Me) == SD_OK);
        CHECK(sd_embedded_mass_matrix_inverse(e, ed, q, Mi) == SD_OK);
        CHECK(sd_embedded_bias_forces(e, ed, q, ue, f_ext, ce) == SD_OK);
        CHECK(sd_embedded_inverse_dynamics(e, ed, q, ue, qdd_e, f_ext, tid) == SD_OK);
        double rb = 0.0, ri = 0.0, tmax = 1e-300;
        for (int i = 0; i < ne; ++i) {
            double s = ce[i] - tau_e[i];
            for (int j = 0; j < ne; ++j) s += Me[i * ne + j] * qdd_e[j];
            tmax = fmax(tmax, fmax(fabs(tau_e[i]), fabs(ce[i])));
            rb = fmax(rb, fmax(fabs(s), fabs(tid[i] - tau_e[i])));
            for (int j = 0; j < ne; ++j) {
                double p = i == j ? -1.0 : 0.0;
                for (int k = 0; k < ne; ++k) p += Me[i * ne + k] * Mi[k * ne + j];
                ri = fmax(ri, fabs(p));
            }
        }
        CHECK(rb / tmax < TOL);
        CHECK(ri < 1e3 * TOL); /* cond(M_e) up to ~1e3 on these (the modes' masses against the hinges') */
        worst_m = fmax(worst_m, fmax(rb / tmax, ri));
        const double ev[5] = {rel(qdd_t, qdd_ta, nv), rel(a_e, a_ta, 6 * nb), rel(f_e, f_ta, 6 * nb),
                              rel(lam_e, lam_ta, nc), rel(cf_e, cf_ta, 6 * ncons)};
        for (int i = 0; i < 5; ++i) {
            CHECK(ev[i] < TOL);
            worst[i] = fmax(worst[i], ev[i]);
        }
        ++states;
    }
    free(q), free(u0), free(ut), free(ue), free(tau_e), free(tau_t), free(qdd_ta), free(qdd_t), free(qdd_e);
    free(lam_ta), free(lam_e), free(f_ext), free(f_ta), free(f_e), free(a_ta), free(a_e), free(cf_ta), free(cf_e);
    printf("  %s: M_e qdd + C_e - tau_e, ID(qdd) - tau_e (relative) and M_e M_e^-1 - I: %.1e\n", sd_model_name(m), worst_m);
    free(indep), free(Me), free(Mi), free(ce), free(tid);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    return states;
}

/* 2. 10 s closed to round-off without projection. */
static void simulate(const sd_model *m, double dt, double *drift)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof *q), *u = calloc((size_t)nv, sizeof *u);
    sd_configuration_neutral(m, q);
    u[0] = 4.0; /* the crank at 4 rad/s (closed by sd_simulate's projection of the start) */
    run r = {m, sd_data_new(m), calloc((size_t)sd_model_nconstraint_rows(m) + 1, sizeof(double)), 0, 0, 0, 0, 0, 0};
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.dt = dt;
    o.duration = 10.0;
    o.every = (int)lround(0.01 / dt);
    o.observer = observe;
    o.observer_user = &r;
    o.project_constraints = 0;
    o.embed = "all";
    sd_error err;
    memset(&err, 0, sizeof err);
    const sd_status st = sd_simulate(m, &o, q, u, NULL, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "flexible four-bar simulation: %s\n", err.message);
    *drift = r.max_de / fmax(r.max_kinetic, 1e-300);
    printf("flexible_four_bar undamped, 10 s embedded (RK4 dt %.0e, no projection): t %.3f s, %ld samples, closure "
           "residual max %.2e, energy drift %.2e of max kinetic %.3g J\n",
           dt, r.t, r.samples, r.max_residual, *drift, r.max_kinetic);
    CHECK(r.t > 9.999);
    CHECK(r.max_residual <= 1e-12);
    sd_data_free(r.d);
    free(r.pos);
    free(q);
    free(u);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <models folder>\n", argv[0]);
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/flexible_four_bar.urdf", argv[1]);
    char *base = test_read_file(path);
    CHECK(base != NULL);
    if (!base) return test_summary("test_embed_flexible_member");

    double worst[5] = {0, 0, 0, 0, 0};
    sd_model *m = load_string(base, "flexible_four_bar");
    CHECK(m != NULL);
    int states = m ? compare_states(m, 26u, worst) : 0;
    CHECK(states >= 6);
    printf("flexible_four_bar, embedded vs tree-augmented, %d states: qdd %.1e  alpha %.1e  f %.1e  lambda %.1e  "
           "constraint f %.1e (tol %.0e)\n",
           states, worst[0], worst[1], worst[2], worst[3], worst[4], TOL);
    sd_model_free(m);

    unsigned rng = 2026u;
    for (int v = 0; v < 6; ++v) {
        int modes = 0;
        double w[5] = {0, 0, 0, 0, 0};
        sd_model *mv = random_variant(base, &rng, &modes);
        CHECK(mv != NULL);
        if (!mv) continue;
        const int n = compare_states(mv, 100u + (unsigned)v, w);
        CHECK(n >= 5);
        printf("random variant %d (%d modes, tip on the coupler, weight on the rocker), %d states: qdd %.1e  alpha "
               "%.1e  f %.1e  lambda %.1e  constraint f %.1e\n",
               v, modes, n, w[0], w[1], w[2], w[3], w[4]);
        sd_model_free(mv);
    }

    /* 2. without modal damping the energy is a conserved quantity: its drift is RK4's, shrinking as dt^4 */
    sd_model *undamped =
        variant(base, "EI=\"50\" mass_per_length=\"2.857142857142857\" elements=\"8\" modes=\"2\"\n"
                      "            boundary=\"cantilever\" planes=\"xz\" damping_ratio=\"0\"/>", "</robot>",
                "flexible_four_bar_undamped");
    CHECK(undamped != NULL);
    if (undamped) {
        double coarse = 0.0, fine = 0.0;
        simulate(undamped, 2e-4, &coarse);
        simulate(undamped, 1e-4, &fine);
        CHECK(fine < 1e-5);
        CHECK(fine < coarse / 8.0); /* fourth order: 16x at half the step, 8x allowed */
        sd_model_free(undamped);
    }

    /* 3. modes the loop constrains: refused, saying why */
    sd_model *out_of_plane =
        variant(base, "EI=\"50\" mass_per_length=\"2.857142857142857\" elements=\"8\" modes=\"2\"\n"
                      "            boundary=\"cantilever\" planes=\"xy\" damping_ratio=\"0.02\"/>", "</robot>",
                "flexible_four_bar_out_of_plane");
    CHECK(out_of_plane != NULL);
    if (out_of_plane) {
        sd_embed_options o;
        sd_embed_options_init(&o);
        o.loops = "all";
        sd_error err;
        sd_embedding *e = sd_embedding_new(out_of_plane, &o, &err);
        CHECK(e == NULL);
        CHECK(err.status == SD_E_NOT_SUPPORTED);
        CHECK(strstr(err.message, "modal coordinate among its dependent speeds") != NULL);
        printf("out-of-plane modes refused: %s\n", err.message);
        sd_embedding_free(e);
        sd_model_free(out_of_plane);
    }
    free(base);
    return test_summary("test_embed_flexible_member");
}
