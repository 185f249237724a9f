/*
 * tests/embed/test_embed_flexible.c — constraint embedding on a model with flexible bodies outside
 * the aggregates (embed_node_model.c: the engine's flexible kind beside the aggregate kind).
 *
 * The model: models/four_bar.urdf (the crank-rocker closed at O4, embedded) with a flexible flag
 * hanging on the rocker, the four-bar's output link (a cantilever beam of 2 modes on a revolute
 * hinge: a flexible child of an aggregate member), and a rigid tip body riding on the flag's tip node
 * (a child on a flexible body's node, whose hinge moves with the beam's deflection).
 *
 * 1. Embedded vs tree-augmented (sd_closed_loop_forward_dynamics, the independent side) at random
 *    closed states with random modal coordinates and rates, tree forces on the independent speeds
 *    and external forces: qdd_tree, every body's acceleration and inter-body force, the multipliers
 *    and the constraint force, to 1e-10 relative.
 * 2. 10 s of sd_simulate with options.embed = all and no projection: the embedded loop stays closed
 *    to round-off (< 1e-12 at every sample), and with no damping the energy (kinetic, gravity, strain)
 *    is kept to RK4's accuracy (converging with the step, below).
 * 3. What stays refused says which case and why: a loop hanging on a node of a flexible body
 *    below it (an aggregate hangs on its parent's body frame). (A flexible member inside the loop:
 *    test_embed_flexible_member.)
 * Fails before the aggregate kind: sd_embedding_new refused every model with a flexible body.
 *
 *   test_embed_flexible <models folder>
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

static const char *flag_xml =
    "  <joint name=\"flag_joint\" type=\"continuous\">\n"
    "    <parent link=\"rocker\"/><child link=\"flag\"/>\n"
    "    <origin xyz=\"0.15 0 0\" rpy=\"0.3 0 0\"/><axis xyz=\"0 0 1\"/>\n"
    "  </joint>\n"
    "  <link name=\"flag\">\n"
    "    <inertial><origin xyz=\"0.02 0 0\"/><mass value=\"0.05\"/>\n"
    "      <inertia ixx=\"1e-5\" ixy=\"0\" ixz=\"0\" iyy=\"2e-5\" iyz=\"0\" izz=\"2e-5\"/></inertial>\n"
    "    <soadyn:flexible>\n"
    "      <beam length=\"0.25\" EI=\"4\" mass_per_length=\"0.8\" elements=\"6\" modes=\"2\"\n"
    "            boundary=\"cantilever\" planes=\"xy\"/>\n"
    "    </soadyn:flexible>\n"
    "  </link>\n"
    "  <joint name=\"tip_joint\" type=\"continuous\">\n"
    "    <parent link=\"flag\"/><child link=\"tip\"/>\n"
    "    <soadyn:node index=\"6\"/>\n"
    "    <origin xyz=\"0.25 0 0\"/><axis xyz=\"1 0 0\"/>\n"
    "  </joint>\n"
    "  <link name=\"tip\">\n"
    "    <inertial><origin xyz=\"0 0.01 0.02\"/><mass value=\"0.1\"/>\n"
    "      <inertia ixx=\"3e-5\" ixy=\"0\" ixz=\"0\" iyy=\"2e-5\" iyz=\"0\" izz=\"1e-5\"/></inertial>\n"
    "  </link>\n";

/* four_bar.urdf with the flag and its tip inserted before </robot>, the namespace declared. */
static sd_model *flag_four_bar(const char *models)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/four_bar.urdf", models);
    char *base = test_read_file(path);
    if (!base) return NULL;
    char *end = strstr(base, "</robot>"), *robot = strstr(base, "<robot ");
    const char *ns = " xmlns:soadyn=\"https://soadyn.example/urdf\"";
    const size_t size = strlen(base) + strlen(flag_xml) + strlen(ns) + 1;
    char *xml = end && robot ? malloc(size) : NULL;
    sd_model *m = NULL;
    if (xml) {
        const size_t head = (size_t)(robot - base) + 6; /* "<robot" */
        int n = snprintf(xml, size, "%.*s%s", (int)head, base, ns);
        n += snprintf(xml + n, size - (size_t)n, "%.*s", (int)(end - (base + head)), base + head);
        snprintf(xml + n, size - (size_t)n, "%s%s", flag_xml, end);
        sd_error err;
        if (sd_urdf_load_string(xml, strlen(xml), "flag_four_bar", NULL, &m, &err) != SD_OK)
            fprintf(stderr, "flag four-bar: %s\n", err.message);
    }
    free(xml);
    free(base);
    return m;
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

static double uniform(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

/* 1. embedded = tree-augmented at random closed states. */
static void compare_states(const sd_model *m)
{
    sd_error err;
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = "all";
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL);
    if (!e) {
        fprintf(stderr, "flag four-bar not embedded: %s\n", err.message);
        return;
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
    unsigned rng = 26u;
    double worst[5] = {0, 0, 0, 0, 0};
    int states = 0;
    for (int trial = 0; trial < 8; ++trial) {
        sd_configuration_neutral(m, q);
        for (int i = 0; i < nq; ++i) q[i] += 0.3 * uniform(&rng); /* hinges and modal coordinates */
        double res = 1.0;
        if (sd_embedded_close(e, ed, q, q, &res) != SD_OK || !(res < 1e-12)) continue;
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
            fprintf(stderr, "flag four-bar: %s\n", sd_embedded_error(ed));
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
        const double ev[5] = {rel(qdd_t, qdd_ta, nv), rel(a_e, a_ta, 6 * nb), rel(f_e, f_ta, 6 * nb),
                              rel(lam_e, lam_ta, nc), rel(cf_e, cf_ta, 6 * ncons)};
        for (int i = 0; i < 5; ++i) {
            CHECK(ev[i] < TOL);
            worst[i] = fmax(worst[i], ev[i]);
        }
        ++states;
    }
    CHECK(states >= 6);
    printf("flag four-bar, embedded vs tree-augmented, %d states: qdd %.1e  alpha %.1e  f %.1e  lambda %.1e  "
           "constraint f %.1e (tol %.0e)\n",
           states, worst[0], worst[1], worst[2], worst[3], worst[4], TOL);

    /* the embedded mass matrix on a flexible model (the tree's projected) inverts the node model's M_e^-1 */
    double *M = calloc((size_t)ne * (size_t)ne + 1, sizeof *M), *Mi = calloc((size_t)ne * (size_t)ne + 1, sizeof *Mi);
    CHECK(sd_embedded_mass_matrix(e, ed, q, M) == SD_OK);
    CHECK(sd_embedded_mass_matrix_inverse(e, ed, q, Mi) == SD_OK);
    double worst_i = 0.0;
    for (int i = 0; i < ne; ++i)
        for (int j = 0; j < ne; ++j) {
            double p = i == j ? -1.0 : 0.0;
            for (int k = 0; k < ne; ++k) p += M[i * ne + k] * Mi[k * ne + j];
            worst_i = fmax(worst_i, fabs(p));
        }
    CHECK(worst_i < 1e-8);
    printf("flag four-bar, M_e M_e^-1 - I: %.1e\n", worst_i);
    free(M);
    free(Mi);
    /* nor tree-augmented rows beside the embedded ones (their rows on the embedded speeds, G N, are
     * formed with the rigid maps only) */
    o.loops = "none";
    sd_embedding *none = sd_embedding_new(m, &o, &err);
    CHECK(none != NULL); /* nothing embedded: the tree itself */
    sd_embedding_free(none);

    free(q), free(u0), free(ut), free(ue), free(tau_e), free(tau_t), free(qdd_ta), free(qdd_t), free(qdd_e);
    free(lam_ta), free(lam_e), free(f_ext), free(f_ta), free(f_e), free(a_ta), free(a_e), free(cf_ta), free(cf_e);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
}

/* 2. 10 s closed to round-off without projection. */
static void simulate(const sd_model *m)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof *q), *u = calloc((size_t)nv, sizeof *u);
    sd_configuration_neutral(m, q);
    u[0] = 4.0; /* the crank at 4 rad/s (closed by sd_simulate's projection of the start) */
    run r = {m, sd_data_new(m), calloc((size_t)sd_model_nconstraint_rows(m) + 1, sizeof(double)), 0, 0, 0, 0, 0, 0};
    sd_sim_options o;
    sd_sim_options_init(&o);
    o.dt = 1e-4;
    o.duration = 10.0;
    o.every = 100;
    o.observer = observe;
    o.observer_user = &r;
    o.project_constraints = 0;
    o.embed = "all";
    o.independent = "crank_joint";
    sd_error err;
    memset(&err, 0, sizeof err);
    const sd_status st = sd_simulate(m, &o, q, u, NULL, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "flag four-bar simulation: %s\n", err.message);
    printf("flag four-bar, 10 s embedded (RK4 dt 1e-4, no projection): t %.3f s, %ld samples, closure residual max "
           "%.2e, energy drift %.2e of max kinetic %.3g J\n",
           r.t, r.samples, r.max_residual, r.max_de / fmax(r.max_kinetic, 1e-300), r.max_kinetic);
    CHECK(r.t > 9.999);
    CHECK(r.max_residual < 1e-12);
    /* RK4's own error: the drift over 10 s was 1.1e-3, 2.4e-4, 9.2e-6, 2.7e-7 of the largest kinetic
     * energy at dt = 4e-4, 2e-4, 1e-4, 5e-5 (the flag's bending and the tip's spin are the fast motions) */
    CHECK(r.max_de < 2e-5 * r.max_kinetic);
    sd_data_free(r.d);
    free(r.pos);
    free(q);
    free(u);
}

/* 3. an aggregate hanging on a node of a flexible body below the loop stays refused, naming the
 * bodies and the reason (a flexible member inside the loop is offered: test_embed_flexible_member). */
static const char *on_node_xml =
    "<robot name=\"loop_on_a_node\" xmlns:soadyn=\"https://soadyn.example/urdf\">\n"
    "  <link name=\"world\"/>\n"
    "  <joint name=\"base_joint\" type=\"continuous\"><parent link=\"world\"/><child link=\"base\"/>\n"
    "    <axis xyz=\"0 0 1\"/></joint>\n"
    "  <link name=\"base\">\n"
    "    <inertial><mass value=\"0.2\"/><inertia ixx=\"1e-4\" ixy=\"0\" ixz=\"0\" iyy=\"1e-4\" iyz=\"0\" izz=\"1e-4\"/></inertial>\n"
    "    <soadyn:flexible><beam length=\"0.5\" EI=\"20\" mass_per_length=\"1\" elements=\"4\" modes=\"2\"\n"
    "      boundary=\"cantilever\" planes=\"xz\"/></soadyn:flexible>\n"
    "  </link>\n"
    "  <joint name=\"crank_joint\" type=\"continuous\"><parent link=\"base\"/><child link=\"crank\"/>\n"
    "    <soadyn:node index=\"4\"/><origin xyz=\"0.5 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "  <link name=\"crank\"><inertial><origin xyz=\"0.05 0 0\"/><mass value=\"0.5\"/>\n"
    "    <inertia ixx=\"5e-4\" ixy=\"0\" ixz=\"0\" iyy=\"9e-4\" iyz=\"0\" izz=\"9e-4\"/></inertial></link>\n"
    "  <joint name=\"rocker_joint\" type=\"continuous\"><parent link=\"crank\"/><child link=\"rocker\"/>\n"
    "    <origin xyz=\"0.1 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "  <link name=\"rocker\"><inertial><origin xyz=\"0.1 0 0\"/><mass value=\"0.5\"/>\n"
    "    <inertia ixx=\"5e-4\" ixy=\"0\" ixz=\"0\" iyy=\"9e-4\" iyz=\"0\" izz=\"9e-4\"/></inertial></link>\n"
    "  <loop name=\"pin\" type=\"revolute\">\n"
    "    <predecessor link=\"base\"><origin xyz=\"0.7 0 0\"/></predecessor>\n"
    "    <successor link=\"rocker\"><origin xyz=\"0.2 0 0\"/></successor>\n"
    "    <axis xyz=\"0 1 0\"/>\n"
    "  </loop>\n"
    "</robot>\n";

static void refused(void)
{
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_string(on_node_xml, strlen(on_node_xml), "loop_on_a_node", NULL, &m, &err) == SD_OK);
    if (!m) {
        fprintf(stderr, "loop on a node: %s\n", err.message);
        return;
    }
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = "all";
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e == NULL);
    CHECK(err.status == SD_E_NOT_SUPPORTED);
    CHECK(strstr(err.message, "'crank'") != NULL && strstr(err.message, "node of the flexible body 'base'") != NULL);
    printf("aggregate on a flexible node refused: %s\n", err.message);
    sd_embedding_free(e);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <models folder>\n", argv[0]);
        return 2;
    }
    sd_model *m = flag_four_bar(argv[1]);
    CHECK(m != NULL);
    if (m) {
        compare_states(m);
        simulate(m);
        sd_model_free(m);
    }
    refused();
    return test_summary("test_embed_flexible");
}
