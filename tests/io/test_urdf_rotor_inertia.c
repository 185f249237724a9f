/*
 * tests/io/test_urdf_rotor_inertia.c — Drake's reflected rotor inertia in URDF transmissions
 * (<actuator><drake:rotor_inertia value/><drake:gear_ratio value/></actuator>: armature =
 * rotor_inertia x gear_ratio^2) and <dynamics damping> reaching the model and the dynamics.
 *
 * Without arguments (label unit): small inline files - the armature of the driven joint, two
 * transmissions on one joint adding up, a transmission before its joint, no gear ratio (1), plain
 * ROS transmissions ignored, and the errors (an unknown joint, a negative rotor inertia, a missing
 * value), each naming file:line.
 * With the shared models folder (label shared_models; 77 when absent): iiwa14_no_collision.urdf -
 * each joint has the armature of its transmission (rotor inertia 1.321e-4 kg m^2 behind gears of
 * 160, 100 for joint 5, 4.54e-5 for joints 6 and 7) and damping 0.5; at random states the articulated-body
 * qdd equals the solve with M_rigid + diag(armature) and tau - C_rigid - damping u, where M_rigid and
 * C_rigid come from the same file rebuilt without the joint terms, to 1e-12.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

static const char *head = "<robot name='r' xmlns:drake='http://drake.mit.edu'>"
                          "<link name='a'/><link name='b'><inertial><mass value='1'/>"
                          "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>";
static const char *joint = "<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
                           "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/>"
                           "<dynamics damping='0.25'/></joint>";

static sd_status load(const char *before, const char *after, sd_model **m, sd_error *err)
{
    char xml[4096];
    snprintf(xml, sizeof xml, "%s%s%s%s</robot>", head, before, joint, after);
    *m = NULL;
    return sd_urdf_load_string(xml, strlen(xml), "inline.urdf", NULL, m, err);
}

#define TRANSMISSION(J, BODY) \
    "<transmission name='t'><type>transmission_interface/SimpleTransmission</type><joint name='" J "'/>" \
    "<actuator name='m'>" BODY "</actuator></transmission>"

static void check_inline(void)
{
    sd_model *m;
    sd_error err;
    CHECK(load("", TRANSMISSION("j", "<drake:gear_ratio value='10'/><drake:rotor_inertia value='0.002'/>"), &m,
               &err) == SD_OK);
    CHECK_CLOSE(sd_model_armature(m, 0), 0.2, 1e-15);
    CHECK_CLOSE(sd_model_damping(m, 0), 0.25, 1e-15);
    sd_model_free(m);
    CHECK(load(TRANSMISSION("j", "<drake:rotor_inertia value='0.5'/>"),
               TRANSMISSION("j", "<drake:rotor_inertia value='0.01'/><drake:gear_ratio value='-3'/>"), &m,
               &err) == SD_OK);
    CHECK_CLOSE(sd_model_armature(m, 0), 0.5 + 0.09, 1e-15);
    sd_model_free(m);
    CHECK(load("", TRANSMISSION("j", "<mechanicalReduction>50</mechanicalReduction>"), &m, &err) == SD_OK);
    CHECK(sd_model_armature(m, 0) == 0.0);
    sd_model_free(m);
    CHECK(load("", TRANSMISSION("nope", "<mechanicalReduction>50</mechanicalReduction>"), &m, &err) == SD_OK);
    sd_model_free(m);
    const struct {
        const char *body, *joint_name, *says;
    } bad[] = {
        {"<drake:rotor_inertia value='0.1'/>", "nope", "nope"},
        {"<drake:rotor_inertia value='-0.1'/>", "j", "negative"},
        {"<drake:rotor_inertia/>", "j", "value"},
        {"<drake:rotor_inertia value='0.1'/><drake:gear_ratio value='abc'/>", "j", "not a number"},
        {"<drake:rotor_inertia value='1e30'/>", "j", "bound"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        char t[512];
        snprintf(t, sizeof t,
                 "<transmission name='t'><joint name='%s'/><actuator name='m'>%s</actuator></transmission>",
                 bad[i].joint_name, bad[i].body);
        const sd_status st = load("", t, &m, &err);
        CHECK(st == SD_E_PARSE && m == NULL);
        CHECK(strstr(err.message, bad[i].says) != NULL && strstr(err.message, "inline.urdf:") != NULL);
        printf("  refused: %s\n", err.message);
    }
}

/* The model rebuilt with no armature, damping or springs. */
static sd_model *rigid_copy(const sd_model *m)
{
    sd_builder *b = sd_builder_new();
    double g[3];
    sd_model_gravity(m, g);
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        sd_body_desc d = *sd_model_body_desc(m, k);
        d.armature = d.damping = d.stiffness = d.spring_ref = 0.0;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) return NULL;
    }
    sd_model *r = NULL;
    sd_builder_build(b, &r, &err);
    sd_builder_free(b);
    return r;
}

static int solve_spd(double *A, int n, double *x)
{
    for (int j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (int k = 0; k < j; ++k) s -= A[j * n + k] * A[j * n + k];
        if (!(s > 0)) return 0;
        A[j * n + j] = sqrt(s);
        for (int i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (int k = 0; k < j; ++k) t -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = t / A[j * n + j];
        }
    }
    for (int i = 0; i < n; ++i) {
        double s = x[i];
        for (int k = 0; k < i; ++k) s -= A[i * n + k] * x[k];
        x[i] = s / A[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = x[i];
        for (int k = i + 1; k < n; ++k) s -= A[k * n + i] * x[k];
        x[i] = s / A[i * n + i];
    }
    return 1;
}

static void check_iiwa(const char *folder)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/iiwa14/iiwa14_no_collision.urdf", folder);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    CHECK(nv == 7);
    /* the file's transmissions, joint by joint (iiwa14_no_collision.urdf lines 340-430) */
    const double rotor[7] = {1.321e-4, 1.321e-4, 1.321e-4, 1.321e-4, 1.321e-4, 4.54e-5, 4.54e-5};
    const double gear[7] = {160, 160, 160, 160, 100, 160, 160};
    double J[7];
    for (int v = 0; v < nv; ++v) {
        J[v] = rotor[v] * gear[v] * gear[v];
        CHECK_CLOSE(sd_model_armature(m, v), J[v], 1e-15);
        CHECK_CLOSE(sd_model_damping(m, v), 0.5, 1e-15);
    }
    sd_model *r = rigid_copy(m);
    CHECK(r != NULL);
    sd_data *d = sd_data_new(m), *dr = sd_data_new(r);
    double q[7], u[7], tau[7], qdd[7], C[7], M[49], x[7];
    uint64_t rng = 0x11a;
    double worst = 0;
    for (int s = 0; s < 20; ++s) {
        sd_configuration_random(m, &rng, q);
        for (int v = 0; v < nv; ++v) {
            u[v] = 4 * sd_random_uniform(&rng) - 2;
            tau[v] = 100 * sd_random_uniform(&rng) - 50;
        }
        CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
        CHECK(sd_mass_matrix(r, dr, q, M) == SD_OK);
        CHECK(sd_bias_forces(r, dr, q, u, NULL, C) == SD_OK);
        for (int v = 0; v < nv; ++v) {
            M[v * nv + v] += J[v];
            x[v] = tau[v] - C[v] - 0.5 * u[v];
        }
        CHECK(solve_spd(M, nv, x));
        worst = fmax(worst, test_rel_diff(qdd, x, nv));
        CHECK_ARRAY_CLOSE(qdd, x, nv, 1e-12, "iiwa ABA qdd vs solve with M + diag(armature)");
    }
    printf("iiwa14 with drake rotor inertia (armature %.6g .. %.6g): ABA qdd vs dense solve, worst %.3g over 20 "
           "states\n", J[6], J[0], worst);
    (void)nq;
    sd_data_free(d);
    sd_data_free(dr);
    sd_model_free(r);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        check_inline();
        return test_summary("test_urdf_rotor_inertia");
    }
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/iiwa14/iiwa14_no_collision.urdf", argv[1]);
    FILE *f = fopen(probe, "r");
    if (!f) {
        printf("skipped: %s not found\n", probe);
        return 77;
    }
    fclose(f);
    check_iiwa(argv[1]);
    return test_summary("test_urdf_rotor_inertia_iiwa");
}
