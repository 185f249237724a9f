/*
 * tests/io/test_urdf_lumping.c — merging fixed joints is exact: a model with its fixed joints
 * merged (mass, centre of mass and inertia lumped, rotations included) has the same mass matrix
 * and bias forces as the same URDF loaded with every fixed joint kept as a 0-dof body, at random
 * states, to 1e-12; merged links stay reachable as frames at the right place.
 */
#include <string.h>

#include <soadyn/dynamics.h>
#include <soadyn/urdf.h>

#include "io/model_compare.h"
#include "test_util.h"

/* A tree with rotated inertial frames, chains of rotated fixed joints and branches off them:
 *   base -j1(rev)-> a -f1(fixed)-> b -f2(fixed)-> c -j3(prism)-> e -f4(fixed)-> tip
 *                   a -f3(fixed)-> d                b -j2(rev)-> g
 * so a carries b, c, d; e carries tip; g hangs off a merged link. */
static const char *const tree_urdf =
    "<robot name='lumping'>\n"
    " <link name='base'><inertial><origin xyz='0.1 0 0.05' rpy='0.2 -0.1 0.3'/><mass value='4'/>"
    "  <inertia ixx='0.3' ixy='0.01' ixz='0' iyy='0.2' iyz='0.02' izz='0.25'/></inertial></link>\n"
    " <link name='a'><inertial><origin xyz='0.02 0.3 -0.01' rpy='0.7 0.4 -1.1'/><mass value='2'/>"
    "  <inertia ixx='0.05' ixy='0.004' ixz='-0.002' iyy='0.03' iyz='0.001' izz='0.06'/></inertial></link>\n"
    " <link name='b'><inertial><origin xyz='0.1 -0.05 0.2' rpy='-0.3 1.2 0.5'/><mass value='1.5'/>"
    "  <inertia ixx='0.02' ixy='0' ixz='0.003' iyy='0.04' iyz='0' izz='0.03'/></inertial></link>\n"
    " <link name='c'><inertial><origin xyz='0 0 0.1' rpy='0 0 0.9'/><mass value='0.7'/>"
    "  <inertia ixx='0.01' ixy='0' ixz='0' iyy='0.012' iyz='0' izz='0.005'/></inertial></link>\n"
    " <link name='d'><inertial><origin xyz='-0.2 0.1 0' rpy='1.0 0 -0.4'/><mass value='0.9'/>"
    "  <inertia ixx='0.008' ixy='0.001' ixz='0' iyy='0.009' iyz='0' izz='0.004'/></inertial></link>\n"
    " <link name='e'><inertial><origin xyz='0.05 0 0' rpy='0.1 0.2 0.3'/><mass value='1.1'/>"
    "  <inertia ixx='0.006' ixy='0' ixz='0' iyy='0.007' iyz='0' izz='0.008'/></inertial></link>\n"
    " <link name='tip'><inertial><origin xyz='0 0.03 0.04' rpy='-0.6 0.5 2.0'/><mass value='0.3'/>"
    "  <inertia ixx='0.001' ixy='0' ixz='0.0002' iyy='0.002' iyz='0' izz='0.0015'/></inertial></link>\n"
    " <link name='g'><inertial><origin xyz='0.15 0 0' rpy='0 0.3 0'/><mass value='0.8'/>"
    "  <inertia ixx='0.004' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial></link>\n"
    " <joint name='j1' type='revolute'><parent link='base'/><child link='a'/>"
    "  <origin xyz='0 0 0.3' rpy='0.1 0.2 0.3'/><axis xyz='0 0 1'/>"
    "  <limit lower='-2' upper='2' effort='10' velocity='3'/></joint>\n"
    " <joint name='f1' type='fixed'><parent link='a'/><child link='b'/><origin xyz='0.2 0.1 0' rpy='0.5 -0.7 1.3'/></joint>\n"
    " <joint name='f2' type='fixed'><parent link='b'/><child link='c'/><origin xyz='0 0.3 0.1' rpy='-1.2 0.3 0.2'/></joint>\n"
    " <joint name='f3' type='fixed'><parent link='a'/><child link='d'/><origin xyz='-0.1 0 0.2' rpy='0 1.5 0'/></joint>\n"
    " <joint name='j3' type='prismatic'><parent link='c'/><child link='e'/><origin xyz='0.1 0 0' rpy='0.3 0 0'/>"
    "  <axis xyz='1 1 0'/><limit lower='-0.5' upper='0.5' effort='100' velocity='1'/></joint>\n"
    " <joint name='f4' type='fixed'><parent link='e'/><child link='tip'/><origin xyz='0 0 0.2' rpy='0.4 0.4 0.4'/></joint>\n"
    " <joint name='j2' type='continuous'><parent link='b'/><child link='g'/><origin xyz='0 0 0.25' rpy='0 0.6 0'/>"
    "  <axis xyz='0 1 0'/></joint>\n"
    "</robot>\n";

static sd_model *load(int floating, int keep_fixed)
{
    sd_urdf_options opt = {.floating_base = floating, .keep_fixed_joints = keep_fixed};
    sd_model *m = NULL;
    sd_error err;
    sd_status st = sd_urdf_load_string(tree_urdf, strlen(tree_urdf), "lumping.urdf", &opt, &m, &err);
    if (st != SD_OK) fprintf(stderr, "load failed: %s\n", err.message);
    CHECK(st == SD_OK);
    return m;
}

/* Each merged link's frame in the merged model sits where its body sits in the kept model. */
static void check_frames(const sd_model *merged, const sd_model *kept)
{
    const int nq = sd_model_nq(merged);
    double *qm = calloc((size_t)nq, sizeof(double)), *qk = calloc((size_t)nq, sizeof(double));
    int *vmap = calloc((size_t)sd_model_nv(merged), sizeof(int));
    uint64_t rng = 99;
    sd_configuration_random(merged, &rng, qm);
    CHECK(compare_map_state(merged, kept, qm, qk, vmap));
    sd_data *dm = sd_data_new(merged), *dk = sd_data_new(kept);
    CHECK(sd_kinematics(merged, dm, qm, NULL, NULL) == SD_OK);
    CHECK(sd_kinematics(kept, dk, qk, NULL, NULL) == SD_OK);
    static const char *const names[] = {"b", "c", "d", "tip"};
    for (int i = 0; i < 4; ++i) {
        const int f = sd_model_frame_index(merged, names[i]);
        const int k = sd_model_body_index(kept, names[i]);
        CHECK(f >= 0 && k >= 0);
        if (f < 0 || k < 0) continue;
        sd_transform X;
        sd_transform Yk;
        CHECK(sd_frame_placement_world(merged, dm, f, &X) == SD_OK);
        CHECK(sd_body_placement_world(kept, dk, k, &Yk) == SD_OK);
        const sd_transform *Y = &Yk;
        CHECK_ARRAY_CLOSE(X.R, Y->R, 9, 1e-12, names[i]);
        CHECK_ARRAY_CLOSE(X.p, Y->p, 3, 1e-12, names[i]);
    }
    sd_data_free(dm);
    sd_data_free(dk);
    free(qm);
    free(qk);
    free(vmap);
}

static void check_case(int floating)
{
    sd_model *merged = load(floating, 0), *kept = load(floating, 1);
    if (merged == NULL || kept == NULL) { sd_model_free(merged); sd_model_free(kept); return; }
    CHECK(sd_model_nbodies(kept) == 8);
    CHECK(sd_model_nbodies(merged) == 4); /* base, a (+ b, c, d), e (+ tip), g */
    CHECK(sd_model_nframes(merged) >= 4);
    CHECK(sd_model_nv(merged) == (floating ? 9 : 3));
    CHECK_CLOSE(sd_model_total_mass(merged), sd_model_total_mass(kept), 1e-14);
    CHECK_CLOSE(sd_model_total_mass(merged), 11.3, 1e-14);
    const int a = sd_model_body_index(merged, "a");
    CHECK(a >= 0);
    if (a >= 0) CHECK_CLOSE(sd_model_body_mass(merged, a), 5.1, 1e-14);
    const int g = sd_model_body_index(merged, "g");
    CHECK(g >= 0 && sd_model_parent(merged, g) == a); /* re-parented from merged link b */
    const double diff = compare_dynamics(merged, kept, 20, 12345);
    printf("floating=%d: merged %d bodies vs kept %d, max relative difference of M and C %.3g\n", floating,
           sd_model_nbodies(merged), sd_model_nbodies(kept), diff);
    CHECK(diff >= 0.0 && diff <= 1e-12);
    check_frames(merged, kept);
    sd_model_free(merged);
    sd_model_free(kept);
}

int main(void)
{
    check_case(0);
    check_case(1);
    return test_summary("test_urdf_lumping");
}
