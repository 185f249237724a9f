/*
 * tests/embed/test_geared_motor.c — the geared motor of 002 Eq 17 (sd_builder_add_geared_motor) and
 * the model file's embed choice (URDF embed="true|false"):
 *   - the builder: two revolute bodies NAME, NAME_rotor on one parent, a COUPLING NAME_gear
 *     q_rotor = ratio q_link, embedded; its errors name the motor and file:line;
 *   - on a fixed base, by hand (002 Eq 17, X_S = [ratio, 1]^T about one axis): the link's
 *     acceleration (tau_link + ratio tau_rotor) / (I_link + ratio^2 J_rotor), the rotor's ratio
 *     times it, the gear's multiplier J_rotor qdd_rotor - tau_rotor; for the pivoting's split and
 *     for 002's own (independent = the link);
 *   - on a carrier that turns on a ball hinge (the rotor's gyroscopic coupling with the carrier's
 *     rotation present): embedded FD = tree-augmented FD (qdd, lambda, inter-body forces) and = the
 *     dense reduction (N^T M N)^-1 N^T (tau - C) of the tree's own M and C (X_S is constant here),
 *     to 1e-10; and far from the armature approximation (the rotor folded into the link's armature
 *     ratio^2 J_rotor), which has no gyroscopic term;
 *   - URDF: embed on <loop>, <coupling>, <mimic> read into sd_model_constraint_embed; a bad value is
 *     an error naming file:line; models/four_bar.urdf with embed="true" is embedded by default, with
 *     "false" not (skipped without the io component).
 */
#include <soadyn/config.h>

#include "embed/embed_reference.h"
#include "random_tree.h"

static const double RATIO = 50.0;

static void inertia_diag(double I[9], double a, double b, double c)
{
    memset(I, 0, 9 * sizeof *I);
    I[0] = a, I[4] = b, I[8] = c;
}

/* The motor's description: link about z with its centre of mass off the axis, rotor about z
 * beside it; `parent` may be NULL. */
static void motor_desc(sd_geared_motor_desc *g, const char *name, const char *parent)
{
    sd_geared_motor_desc_init(g);
    g->name = name;
    g->parent = parent;
    g->placement.p[2] = 0.1;
    g->mass = 2.0;
    g->com[0] = 0.3;
    inertia_diag(g->inertia, 0.02, 0.04, 0.05);
    g->rotor_placement.p[0] = 0.1;
    g->rotor_placement.p[1] = 0.2;
    g->rotor_mass = 0.5;
    inertia_diag(g->rotor_inertia, 2e-4, 2e-4, 1e-4);
    g->ratio = RATIO;
}

static void test_builder(void)
{
    sd_builder *b = sd_builder_new();
    sd_geared_motor_desc g;
    motor_desc(&g, "m", NULL);
    sd_error err;
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (!m) return;
    CHECK(sd_model_nbodies(m) == 2 && sd_model_nv(m) == 2);
    const int link = sd_model_body_index(m, "m"), rotor = sd_model_body_index(m, "m_rotor");
    CHECK(link >= 0 && rotor >= 0 && sd_model_joint_index(m, "m") == link && sd_model_joint_index(m, "m_rotor") == rotor);
    CHECK(sd_model_hinge(m, link) == SD_HINGE_REVOLUTE && sd_model_hinge(m, rotor) == SD_HINGE_REVOLUTE);
    CHECK(sd_model_parent(m, link) == -1 && sd_model_parent(m, rotor) == -1);
    const int c = sd_model_constraint_index(m, "m_gear");
    CHECK(c == 0 && sd_model_constraint_type(m, c) == SD_CONSTRAINT_COUPLING && sd_model_constraint_embed(m, c) == 1);
    int ba = -2, bb = -2;
    CHECK(sd_model_constraint_bodies(m, c, &ba, &bb) == SD_OK && ba == rotor && bb == link);
    sd_model_free(m);

    /* errors name the motor and where it was described */
    b = sd_builder_new();
    g.source_file = "motors.c";
    g.source_line = 7;
    g.ratio = 0.0;
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_E_MODEL);
    CHECK(strstr(err.message, "motors.c:7: ") == err.message && strstr(err.message, "geared motor 'm'") != NULL);
    g.ratio = NAN;
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_E_MODEL);
    g.ratio = RATIO;
    g.name = NULL;
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_E_MODEL && strstr(err.message, "motors.c:7: ") != NULL);
    g.name = "m";
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_OK);
    CHECK(sd_builder_add_geared_motor(b, &g, &err) != SD_OK); /* the same names again */
    CHECK(strstr(err.message, "geared motor 'm'") != NULL && strstr(err.message, "motors.c:7: ") == err.message);
    printf("  duplicate motor: %s\n", err.message);
    CHECK(sd_builder_add_geared_motor(NULL, &g, &err) == SD_E_ARGUMENT);
    sd_builder_free(b);
    /* what the builder checks at build time names the part (the rotor's inertia) */
    b = sd_builder_new();
    inertia_diag(g.rotor_inertia, -1.0, 1.0, 1.0);
    g.name = "m2";
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_OK);
    m = NULL;
    CHECK(sd_builder_build(b, &m, &err) != SD_OK && strstr(err.message, "m2_rotor") != NULL);
    printf("  bad rotor inertia: %s\n", err.message);
    sd_model_free(m);
    sd_builder_free(b);
}

static sd_embedding *embed(const sd_model *m, const char *independent)
{
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.independent = independent;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    CHECK(e != NULL);
    if (!e) fprintf(stderr, "  sd_embedding_new: %s\n", err.message);
    return e;
}

/* 002 Eq 17 by hand on a fixed base: one axis, no velocity terms. */
static void test_fixed_base(const char *independent)
{
    sd_builder *b = sd_builder_new();
    sd_geared_motor_desc g;
    motor_desc(&g, "m", NULL);
    sd_error err;
    CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    sd_embedding *e = m ? embed(m, independent) : NULL;
    if (!e) {
        sd_model_free(m);
        return;
    }
    CHECK(sd_embedding_nv(e) == 1 && sd_embedding_naggregates(e) == 1);
    const int link = sd_model_v_index(m, sd_model_body_index(m, "m"));
    const int rotor = sd_model_v_index(m, sd_model_body_index(m, "m_rotor"));
    if (independent) CHECK(sd_embedding_speed_index(e, 0) == link);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    const double I_link = 0.05 + 2.0 * 0.3 * 0.3, J_rotor = 1e-4;
    /* the actuator on the independent speed (the embedded system's tau) */
    const int ind = sd_embedding_speed_index(e, 0);
    const double tau_link = ind == link ? 1.3 : 0.0, tau_rotor = ind == rotor ? 0.02 : 0.0;
    const double qdd_link = (tau_link + RATIO * tau_rotor) / (I_link + RATIO * RATIO * J_rotor);
    const double lambda = J_rotor * RATIO * qdd_link - tau_rotor; /* the rotor's J qdd = tau + lambda */
    double q[2], u[2], tau[2], f_ext[12] = {0}, qdd_e[1];
    q[link] = 0.4, q[rotor] = RATIO * 0.4;
    u[link] = -0.7, u[rotor] = RATIO * -0.7;
    tau[link] = tau_link, tau[rotor] = tau_rotor;
    const er_result r = er_compare(m, e, ed, d, q, u, tau, f_ext, qdd_e);
    CHECK(r.ok);
    CHECK(r.qdd < 1e-10 && r.lambda < 1e-10 && r.force < 1e-10);
    double qdd_ta[2], lam_ta[1], lam_e[1];
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, f_ext, qdd_ta, lam_ta, NULL) == SD_OK);
    CHECK_CLOSE(qdd_ta[link], qdd_link, 1e-12);
    CHECK_CLOSE(qdd_ta[rotor], RATIO * qdd_link, 1e-12 * RATIO);
    CHECK_CLOSE(lam_ta[0], lambda, 1e-12);
    CHECK_CLOSE(qdd_e[0], ind == link ? qdd_link : RATIO * qdd_link, 1e-12 * RATIO);
    CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
    CHECK_CLOSE(lam_e[0], lambda, 1e-12);
    printf("  fixed base, independent %-6s: qdd_link %.15g (by hand %.15g), gear lambda %.15g (%.15g); vs "
           "tree-augmented qdd %.1e lambda %.1e forces %.1e\n",
           ind == link ? "link" : "rotor", ind == link ? qdd_e[0] : qdd_e[0] / RATIO, qdd_link, lam_e[0], lambda, r.qdd,
           r.lambda, r.force);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    sd_model_free(m);
}

/* The carrier: a body on a ball hinge, the motor on it. armature: the rotor folded into the link
 * (the approximation without the rotor's own body). */
static sd_model *carrier_model(int armature)
{
    sd_builder *b = sd_builder_new();
    sd_body_desc c;
    sd_body_desc_init(&c);
    c.name = "carrier";
    c.hinge = SD_HINGE_SPHERICAL;
    c.mass = 3.0;
    c.com[2] = 0.05;
    inertia_diag(c.inertia, 0.03, 0.02, 0.04);
    sd_error err;
    CHECK(sd_builder_add_body(b, &c, &err) == SD_OK);
    sd_geared_motor_desc g;
    motor_desc(&g, "m", "carrier");
    if (!armature) {
        CHECK(sd_builder_add_geared_motor(b, &g, &err) == SD_OK);
    } else {
        sd_body_desc l;
        sd_body_desc_init(&l);
        l.name = "m";
        l.parent = "carrier";
        l.hinge = SD_HINGE_REVOLUTE;
        l.placement = g.placement;
        l.mass = g.mass;
        memcpy(l.com, g.com, sizeof l.com);
        memcpy(l.inertia, g.inertia, sizeof l.inertia);
        l.armature = RATIO * RATIO * g.rotor_inertia[8];
        CHECK(sd_builder_add_body(b, &l, &err) == SD_OK);
    }
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

static void test_carrier(void)
{
    sd_model *m = carrier_model(0), *ma = carrier_model(1);
    if (!m || !ma) {
        sd_model_free(m);
        sd_model_free(ma);
        return;
    }
    sd_embedding *e = embed(m, NULL);
    if (!e) {
        sd_model_free(m);
        sd_model_free(ma);
        return;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), ne = sd_embedding_nv(e);
    CHECK(nv == 5 && ne == 4);
    const int link = sd_model_body_index(m, "m"), rotor = sd_model_body_index(m, "m_rotor");
    const int vl = sd_model_v_index(m, link), vr = sd_model_v_index(m, rotor);
    const int ql = sd_model_q_index(m, link), qr = sd_model_q_index(m, rotor);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m), *da = sd_data_new(ma);
    double q[9], u[5], tau[5], f_ext[18] = {0}, qdd_e[4], M[25], C[5], N[20], qa[8], ua[4], taua[4], qdda[4];
    double worst_ta = 0.0, worst_dense = 0.0, least_gap = INFINITY;
    uint64_t rng = 0x9ea2ed0ULL;
    for (int trial = 0; trial < 20; ++trial) {
        sd_configuration_random(m, &rng, q);
        random_vector(&rng, u, nv, 2.0);
        q[qr] = RATIO * q[ql];
        u[vr] = RATIO * u[vl];
        random_vector(&rng, tau, nv, 1.0);
        if (sd_embedding_speed_index(e, 3) == vr) tau[vr] *= 0.02, tau[vl] = 0.0; /* the independent one */
        else tau[vr] = 0.0;
        const er_result r = er_compare(m, e, ed, d, q, u, tau, f_ext, qdd_e);
        CHECK(r.ok);
        CHECK(r.qdd < 1e-10 && r.lambda < 1e-10 && r.force < 1e-10);
        worst_ta = fmax(worst_ta, fmax(r.qdd, fmax(r.lambda, r.force)));
        /* the dense reduction on the tree's M and C: X_S constant, so qdd_c = 0 */
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
        CHECK(er_tree_map(e, ed, q, nv, N));
        double Me[16], re[4], L[16], x[4];
        for (int a = 0; a < ne; ++a) {
            re[a] = 0.0;
            for (int i = 0; i < nv; ++i) re[a] += N[i * ne + a] * (tau[i] - C[i]);
            for (int b2 = 0; b2 < ne; ++b2) {
                double s = 0.0;
                for (int i = 0; i < nv; ++i)
                    for (int j = 0; j < nv; ++j) s += N[i * ne + a] * M[i * nv + j] * N[j * ne + b2];
                Me[a * ne + b2] = s;
            }
        }
        memcpy(L, Me, sizeof Me); /* Cholesky solve */
        for (int j = 0; j < ne; ++j) {
            for (int k = 0; k < j; ++k) L[j * ne + j] -= L[j * ne + k] * L[j * ne + k];
            L[j * ne + j] = sqrt(L[j * ne + j]);
            for (int i = j + 1; i < ne; ++i) {
                for (int k = 0; k < j; ++k) L[i * ne + j] -= L[i * ne + k] * L[j * ne + k];
                L[i * ne + j] /= L[j * ne + j];
            }
        }
        for (int i = 0; i < ne; ++i) {
            x[i] = re[i];
            for (int k = 0; k < i; ++k) x[i] -= L[i * ne + k] * x[k];
            x[i] /= L[i * ne + i];
        }
        for (int i = ne - 1; i >= 0; --i) {
            for (int k = i + 1; k < ne; ++k) x[i] -= L[k * ne + i] * x[k];
            x[i] /= L[i * ne + i];
        }
        const double ed_rel = er_rel(qdd_e, x, ne);
        CHECK(ed_rel < 1e-10);
        worst_dense = fmax(worst_dense, ed_rel);
        /* the armature approximation: the carrier's accelerations differ (no rotor gyroscopics,
         * no rotor mass off the link's axis) */
        memcpy(qa, q, (size_t)(nq - 1) * sizeof *qa); /* the carrier's 4 and the link's 1 coordinate */
        ua[0] = u[0], ua[1] = u[1], ua[2] = u[2], ua[3] = u[vl];
        taua[0] = tau[0], taua[1] = tau[1], taua[2] = tau[2], taua[3] = tau[vl] + RATIO * tau[vr];
        CHECK(sd_forward_dynamics(ma, da, qa, ua, taua, NULL, qdda) == SD_OK);
        double qt[5];
        for (int i = 0; i < nv; ++i) {
            qt[i] = 0.0;
            for (int j = 0; j < ne; ++j) qt[i] += N[i * ne + j] * qdd_e[j];
        }
        least_gap = fmin(least_gap, er_rel(qdda, qt, 3));
    }
    CHECK(least_gap > 1e-4);
    printf("  carrier on a ball hinge (20 states): vs tree-augmented (qdd, lambda, forces) %.1e, vs dense "
           "(N^T M N)^-1 N^T (tau - C) %.1e; the armature approximation's carrier accelerations differ by at "
           "least %.1e\n",
           worst_ta, worst_dense, least_gap);
    sd_data_free(d);
    sd_data_free(da);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    sd_model_free(m);
    sd_model_free(ma);
}

static const char *URDF_EMBED =
    "<robot name=\"r\">\n"                                                                     /* 1 */
    "  <link name=\"base\"/>\n"                                                                /* 2 */
    "  <link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <link name=\"c\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <link name=\"d\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"ja\" type=\"revolute\"><parent link=\"base\"/><child link=\"a\"/><axis xyz=\"0 0 1\"/>"
    "<limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint>\n"                   /* 7 */
    "  <joint name=\"jb\" type=\"continuous\"><parent link=\"base\"/><child link=\"b\"/><axis xyz=\"0 0 1\"/>"
    "<mimic joint=\"ja\" multiplier=\"2\" EMBED_MIMIC/></joint>\n"                             /* 8 */
    "  <joint name=\"jc\" type=\"continuous\"><parent link=\"base\"/><child link=\"c\"/><axis xyz=\"0 0 1\"/></joint>\n"
    "  <joint name=\"jd\" type=\"continuous\"><parent link=\"c\"/><child link=\"d\"/><origin xyz=\"1 0 0\"/>"
    "<axis xyz=\"0 0 1\"/></joint>\n"                                                          /* 10 */
    "  <coupling name=\"cp\" ratio=\"3\" EMBED_COUPLING><predecessor joint=\"jc\"/><successor joint=\"jd\"/></coupling>\n"
    "  <loop name=\"lp\" type=\"ball\" EMBED_LOOP><predecessor link=\"a\"/><successor link=\"b\"/></loop>\n"
    "</robot>\n";

/* URDF_EMBED with the three placeholders replaced (each "" or an attribute). */
static sd_status load_urdf(const char *mimic, const char *coupling, const char *loop, sd_model **m, sd_error *err)
{
    char xml[4096];
    const char *keys[3] = {"EMBED_MIMIC", "EMBED_COUPLING", "EMBED_LOOP"}, *vals[3] = {mimic, coupling, loop};
    const char *s = URDF_EMBED;
    size_t n = 0;
    while (*s) {
        int hit = 0;
        for (int k = 0; k < 3 && !hit; ++k)
            if (strncmp(s, keys[k], strlen(keys[k])) == 0) {
                n += (size_t)snprintf(xml + n, sizeof xml - n, "%s", vals[k]);
                s += strlen(keys[k]);
                hit = 1;
            }
        if (!hit) xml[n++] = *s++;
    }
    xml[n] = '\0';
    *m = NULL;
    return sd_urdf_load_string(xml, n, "embed.urdf", NULL, m, err);
}

#if SOADYN_HAS_IO
/* The bundled models/four_bar.urdf (found beside this source) with embed="true|false" on its loop:
 * the embedding's default (the file's choice) follows it. */
static void test_urdf_four_bar(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", __FILE__);
    char *cut = strstr(path, "tests/embed/test_geared_motor.c");
    if (!cut) {
        printf("  four_bar.urdf part skipped: source folder unknown\n");
        return;
    }
    snprintf(cut, sizeof path - (size_t)(cut - path), "models/four_bar.urdf");
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("  four_bar.urdf part skipped: %s not found\n", path);
        return;
    }
    static char text[65536], xml[65536 + 64];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *loop = strstr(text, "<loop ");
    CHECK(loop != NULL);
    if (!loop) return;
    for (int embed = 0; embed < 2; ++embed) {
        const size_t head = (size_t)(loop - text) + strlen("<loop ");
        const int len = snprintf(xml, sizeof xml, "%.*sembed=\"%s\" %s", (int)head, text, embed ? "true" : "false",
                                 text + head);
        sd_model *m = NULL;
        sd_error err;
        CHECK(sd_urdf_load_string(xml, (size_t)len, "four_bar.urdf", NULL, &m, &err) == SD_OK);
        if (!m) continue;
        CHECK(sd_model_constraint_embed(m, 0) == embed);
        sd_embed_options o;
        sd_embed_options_init(&o);
        sd_embedding *e = sd_embedding_new(m, &o, &err);
        CHECK(e != NULL);
        if (e) {
            CHECK(sd_embedding_constraint_embedded(e, 0) == embed);
            CHECK(sd_embedding_naggregates(e) == embed && sd_embedding_nv(e) == (embed ? 1 : 3));
            sd_embedding_free(e);
        }
        sd_model_free(m);
    }
    printf("  four_bar.urdf with embed=\"true\": one aggregate, 1 speed; embed=\"false\": none, 3 speeds\n");
}
#endif

static void test_urdf(void)
{
#if SOADYN_HAS_IO
    sd_model *m = NULL;
    sd_error err;
    sd_status st = load_urdf("", "", "", &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s\n", err.message);
    if (m) { /* rows: loops, couplings, mimics; default tree-augmented */
        CHECK(sd_model_nconstraints(m) == 3);
        for (int c = 0; c < 3; ++c) CHECK(sd_model_constraint_embed(m, c) == 0);
        sd_model_free(m);
    }
    st = load_urdf("embed=\"true\"", "embed=\"1\"", "embed=\"false\"", &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s\n", err.message);
    if (m) {
        CHECK(sd_model_constraint_embed(m, sd_model_constraint_index(m, "lp")) == 0);
        CHECK(sd_model_constraint_embed(m, sd_model_constraint_index(m, "cp")) == 1);
        CHECK(sd_model_constraint_embed(m, sd_model_constraint_index(m, "jb")) == 1);
        sd_model_free(m);
    }
    st = load_urdf("", "", "embed=\"0\"", &m, &err);
    CHECK(st == SD_OK);
    sd_model_free(m);
    st = load_urdf("", "", "embed=\"true\"", &m, &err);
    CHECK(st == SD_OK && m && sd_model_constraint_embed(m, sd_model_constraint_index(m, "lp")) == 1);
    sd_model_free(m);
    /* bad values: file:line of the element */
    const struct { const char *mimic, *coupling, *loop, *where; } bad[] = {
        {"embed=\"yes\"", "", "", "embed.urdf:8"},
        {"", "embed=\"\"", "", "embed.urdf:11"},
        {"", "", "embed=\"TRUE\"", "embed.urdf:12"},
        {"", "", "embed=\"2\"", "embed.urdf:12"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        st = load_urdf(bad[i].mimic, bad[i].coupling, bad[i].loop, &m, &err);
        CHECK(st == SD_E_PARSE && m == NULL);
        CHECK(strstr(err.message, bad[i].where) != NULL && strstr(err.message, "embed") != NULL);
        if (!strstr(err.message, bad[i].where)) fprintf(stderr, "  expected %s in: %s\n", bad[i].where, err.message);
        if (i == 0) printf("  bad embed value: %s\n", err.message);
        sd_model_free(m);
    }
    test_urdf_four_bar();
#else
    printf("  URDF part skipped: built without the io component\n");
#endif
}

int main(void)
{
    test_builder();
    test_urdf();
    test_fixed_base(NULL);
    test_fixed_base("m");
    test_carrier();
    return test_summary("test_geared_motor");
}
