/*
 * tests/validation/test_mujoco_mjcf.c — soadyn's MJCF reader against MuJoCo 2.2.2 (Debian's
 * libmujoco-dev) reading the same files: every MJCF file of ../shared/models MuJoCo loads (it
 * refuses those whose meshes are not shipped or whose options are newer than it), and inline
 * models that exercise what those files do not (every orientation form, eulerseq with fixed axes,
 * default classes and childclass, several joints in one body with anchors and refs, slide and
 * ball joints, springs with springref, ball springs, every primitive geom with fromto, geom
 * mass and density, visual-only geoms, inertiagrouprange, boundmass/boundinertia, settotalmass,
 * <include>).
 *
 * Compared at 20 random states: M (mj_fullM, with armature) and the bias forces with the joints'
 * passive forces (soadyn's C = MuJoCo's qfrc_bias - qfrc_passive). Joints are matched by name;
 * coordinates are MuJoCo's qpos; speeds too except on free joints, where soadyn's (angular,
 * linear in the body frame) are MuJoCo's (linear in the world, angular in the body) through
 * qvel = T u, so M = T^T M_mj T and C = T^T (bias_mj - passive_mj + M_mj Tdot u).
 * The tolerance is relative to the largest entry of M (of C). Printed: each model's error.
 * Also: soadyn's reference configuration equals MuJoCo's qpos0 (quaternions up to sign), and on
 * models with loops the gap of each connect / joint equality is MuJoCo's (efc_pos) at qpos0, at
 * each keyframe and at random configurations; both close at qpos0.
 *
 * The test's own files (tests/io/mjcf_mujoco) are compared at 1e-12, with qdd (MuJoCo's qacc_smooth)
 * too, and on models with loops the gaps also at configurations soadyn's assembly closed (MuJoCo's
 * gaps must be 0 there) and weld gaps as position and angle.
 *
 * Usage: test_mujoco_mjcf <shared models folder> [<own files folder>]; the inline models run
 * without them.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

/* MuJoCo keeps each body's inertia as principal moments and axes (its own eigen-decomposition)
 * and its mass matrix from them; soadyn keeps the tensor. Where inertias have no products (or only
 * small ones) the two agree to 1e-12 and better; MuJoCo's eigen-decomposition of the menagerie's
 * fullinertia tensors with products is good to about 2e-10 (cassie) and 3e-8 (panda) relative:
 * with the products and <inertial> quats zeroed in both readers' input, the same two files agree
 * to 4e-16 and 3e-15. So those two are compared at 1e-9 and 1e-7, everything else at 1e-10. */
#define TOL 1e-10
static double tol_now = TOL;
/* qdd is compared (against MuJoCo's qacc_smooth) on the test's own files, whose M are well conditioned;
 * on the shared models it is printed only */
static int check_qdd = 0;

/* The test's own files (tests/io/mjcf_mujoco): free-joint armature, weld anchor, nested include,
 * unnamed joints, <flag gravity/passive="disable"> with a weld of torquescale 0; compared at 1e-12 */
static const char *const own_files[] = {"free_armature.xml", "weld_anchor.xml", "include_nested.xml",
                                        "unnamed_joints.xml", "flags_torquescale.xml"};

static const char *const shared_files[] = {
    "humanoid_mjcf_debian/humanoid.xml", "humanoid_mjcf_debian/22_humanoids.xml", "ant_mjcf/ant.xml",
    "half_cheetah_mjcf/half_cheetah.xml", "acrobot/acrobot.xml", "humanoid_mjcf/humanoid.xml",
    "cassie_mjcf/cassie.xml", "panda/panda.xml", "iiwa14/iiwa14.xml", "ur5/ur5e.xml",
};

/* Inline models: {file name, text}; files of one model may include each other. */
static const char *const inline_models[][2] = {
    {"orient.xml",
     "<mujoco model='orient'>\n"
     "  <compiler angle='degree' eulerseq='zYx' boundmass='0.05' boundinertia='0.001'/>\n"
     "  <option gravity='0.3 -0.2 -9.7'/>\n"
     "  <default>\n"
     "    <joint damping='0.3' armature='0.02'/>\n"
     "    <geom density='700'/>\n"
     "    <default class='leg'>\n"
     "      <joint stiffness='5' springref='10' axis='0 1 0'/>\n"
     "      <geom type='capsule' size='0.04'/>\n"
     "      <default class='foot'><geom type='box' size='0.05 0.03 0.02' mass='0.4'/></default>\n"
     "    </default>\n"
     "  </default>\n"
     "  <worldbody>\n"
     "    <body name='base' pos='0.1 0.2 1' euler='10 20 30'>\n"
     "      <freejoint name='root'/>\n"
     "      <geom type='ellipsoid' size='0.2 0.1 0.15' quat='0.9 0.1 0.3 -0.2'/>\n"
     "      <geom type='sphere' size='0.05' pos='0.3 0 0'/>\n"
     "      <geom type='box' size='0.5 0.5 0.5' contype='0' conaffinity='0' group='3'/>\n"
     "      <geom type='box' size='0.1 0.1 0.1' group='6'/>\n"
     "      <body name='thigh' pos='0.1 0 -0.1' xyaxes='0 1 0 -1 0.2 0' childclass='leg'>\n"
     "        <joint name='hip_x' axis='1 0 0' pos='0 0 0.05' ref='15'/>\n"
     "        <joint name='hip_y' pos='0.01 0 0.02'/>\n"
     "        <joint name='hip_slide' type='slide' axis='0 0.3 1' ref='0.05' springref='0.1'/>\n"
     "        <geom fromto='0 0 0 0.05 0.02 -0.3'/>\n"
     "        <body name='shin' pos='0.05 0.02 -0.3' zaxis='0.2 0.3 1'>\n"
     "          <joint name='knee' range='-90 0' limited='true'/>\n"
     "          <geom type='cylinder' fromto='0 0 0 0 0.01 -0.25' size='0.03'/>\n"
     "          <body name='foot' pos='0 0.01 -0.27' axisangle='1 1 0 35'>\n"
     "            <joint name='ankle' type='ball' stiffness='2' damping='0.1'/>\n"
     "            <geom class='foot' pos='0.02 0 0' euler='5 10 15'/>\n"
     "            <geom type='ellipsoid' fromto='0 0 0 0.1 0 0' size='0.02 0.03 0'/>\n"
     "            <geom type='box' fromto='0 0 0 0 0.1 0.02' size='0.01 0.02 0'/>\n"
     "          </body>\n"
     "        </body>\n"
     "      </body>\n"
     "      <include file='orient_arm.xml'/>\n"
     "    </body>\n"
     "    <body name='tiny' pos='1 0 0'>\n"
     "      <joint name='tiny_hinge' axis='0 0 1'/>\n"
     "      <geom type='sphere' size='0.001'/>\n"
     "    </body>\n"
     "  </worldbody>\n"
     "</mujoco>\n"},
    {"orient_arm.xml",
     "<mujoco>\n"
     "  <body name='arm' pos='0 0.2 0.1' quat='0.7 0.1 0.7 0.1'>\n"
     "    <joint name='shoulder' axis='0 0 1' damping='2'/>\n"
     "    <inertial pos='0.1 0.02 0' quat='1 0.2 0 0.1' mass='1.5' diaginertia='0.02 0.03 0.04'/>\n"
     "    <geom type='mesh' mesh='not_loaded'/>\n"
     "    <body name='forearm' pos='0.3 0 0' euler='0 0 45'>\n"
     "      <joint name='elbow' axis='0 1 0'/>\n"
     "      <inertial pos='0.1 0 0' mass='0.7' fullinertia='0.01 0.02 0.015 0.001 -0.002 0.0005'/>\n"
     "    </body>\n"
     "  </body>\n"
     "</mujoco>\n"},
    {"total.xml",
     "<mujoco model='total'>\n"
     "  <compiler angle='radian' settotalmass='7' inertiafromgeom='true' inertiagrouprange='0 2'/>\n"
     "  <worldbody>\n"
     "    <body name='a' pos='0 0 1'>\n"
     "      <joint name='a1' type='hinge' axis='1 0 0'/>\n"
     "      <joint name='a2' type='hinge' axis='0 1 0' pos='0.1 0 0'/>\n"
     "      <inertial pos='5 5 5' mass='100' diaginertia='1 1 1'/>\n"
     "      <geom type='capsule' fromto='0 0 0 0.3 0 -0.4' size='0.05' density='500'/>\n"
     "      <geom type='sphere' size='0.2' group='3'/>\n"
     "      <body name='b' pos='0.3 0 -0.4' euler='0.1 0.2 0.3'>\n"
     "        <joint name='b1' type='slide' axis='1 1 0'/>\n"
     "        <joint name='b2' type='hinge' axis='0 0 1' ref='0.4' springref='0.2' stiffness='3'/>\n"
     "        <geom type='cylinder' size='0.04 0.2' pos='0 0 -0.2'/>\n"
     "      </body>\n"
     "    </body>\n"
     "  </worldbody>\n"
     "</mujoco>\n"},
};

static double max_abs(const double *a, int n)
{
    double m = 0;
    for (int i = 0; i < n; ++i) m = fabs(a[i]) > m ? fabs(a[i]) : m;
    return m;
}

/* What MuJoCo 2.2.2 needs taken out of a menagerie file to load it, none of which soadyn reads:
 * mesh and texture files (not shipped), the geoms that show the meshes (their bodies have an
 * <inertial>), and option values newer than 2.2.2 (integrator="implicitfast"). */
static void strip_for_mujoco(xmlNode *node)
{
    for (xmlNode *c = node->children, *next; c; c = next) {
        next = c->next;
        if (c->type != XML_ELEMENT_NODE) continue;
        const char *n = (const char *)c->name;
        if ((!strcmp(n, "geom") && xmlHasProp(c, BAD_CAST "mesh")) || !strcmp(n, "mesh") ||
            (!strcmp(n, "texture") && xmlHasProp(c, BAD_CAST "file"))) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
            continue;
        }
        if (!strcmp(n, "option")) xmlUnsetProp(c, BAD_CAST "integrator");
        if (!strcmp(n, "material")) xmlUnsetProp(c, BAD_CAST "texture");
        strip_for_mujoco(c);
    }
}

/* soadyn's reference configuration against MuJoCo's qpos0, joint by joint (a quaternion up to its
 * sign); returns the largest difference. */
static double reference_vs_qpos0(const mjModel *mm, const sd_model *sm, const int *jq)
{
    double *r = malloc(8 * ((size_t)sd_model_nq(sm) + 1)), worst = 0.0;
    sd_configuration_reference(sm, r);
    for (int j = 0; j < mm->njnt; ++j) {
        const int qa = mm->jnt_qposadr[j], type = mm->jnt_type[j];
        const int nqj = type == mjJNT_FREE ? 7 : type == mjJNT_BALL ? 4 : 1, quat = type == mjJNT_FREE ? 3 : 0;
        double plus = 0.0, minus = 0.0;
        for (int k = 0; k < nqj; ++k) {
            const double a = r[jq[j] + k], b = mm->qpos0[qa + k];
            if (nqj > 1 && k >= quat) {
                plus = fmax(plus, fabs(a - b));
                minus = fmax(minus, fabs(a + b));
            } else {
                worst = fmax(worst, fabs(a - b));
            }
        }
        worst = fmax(worst, fmin(plus, minus));
    }
    free(r);
    return worst;
}

/* The loops' position residuals, soadyn's against MuJoCo's equality violations (efc_pos), as the
 * length of each connect's gap (soadyn's rows are the gap in F_A's axes, MuJoCo's in the world's) and
 * each joint equality's one row, at MuJoCo's qpos0, at each keyframe and at two random
 * configurations. Prints the largest gap at qpos0 and at the keyframes; returns the largest
 * difference of the two programs' gaps, relative to max(1, gap). */
static double loops_vs_mujoco(const mjModel *mm, mjData *md, const sd_model *sm, sd_data *sd, const int *jq,
                              uint64_t *rng, const char *label)
{
    const int nc = sd_model_nconstraints(sm), nq = sd_model_nq(sm);
    double *q = malloc(8 * ((size_t)nq + 1)), *res = malloc(8 * ((size_t)sd_model_nconstraint_rows(sm) + 1));
    double worst = 0.0;
    const int nstates = 1 + mm->nkey + 2 + 2; /* qpos0, keyframes, 2 random, 2 closed by soadyn */
    for (int s = 0; s < nstates; ++s) {
        const mjtNum *src = s == 0 ? mm->qpos0 : s <= mm->nkey ? mm->key_qpos + (size_t)(s - 1) * mm->nq : NULL;
        const int closed = s >= nstates - 2;
        if (src) mju_copy(md->qpos, src, mm->nq);
        else {
            sd_configuration_random(sm, rng, q);
            if (closed) { /* soadyn's assembly near a random configuration: MuJoCo's gaps close there too */
                double left = 1.0;
                CHECK(sd_assemble_configuration(sm, sd, q, NULL, 1e-13, 100, q, &left) == SD_OK);
            }
            for (int j = 0; j < mm->njnt; ++j) {
                const int nqj = mm->jnt_type[j] == mjJNT_FREE ? 7 : mm->jnt_type[j] == mjJNT_BALL ? 4 : 1;
                for (int k = 0; k < nqj; ++k) md->qpos[mm->jnt_qposadr[j] + k] = q[jq[j] + k];
            }
        }
        for (int j = 0; j < mm->njnt; ++j) {
            const int nqj = mm->jnt_type[j] == mjJNT_FREE ? 7 : mm->jnt_type[j] == mjJNT_BALL ? 4 : 1;
            for (int k = 0; k < nqj; ++k) q[jq[j] + k] = md->qpos[mm->jnt_qposadr[j] + k];
        }
        mju_zero(md->qvel, mm->nv);
        mj_forward(mm, md);
        CHECK(sd_constraint_residuals(sm, sd, q, NULL, res, NULL) == SD_OK);
        double gap_sd = 0.0, gap_mj = 0.0;
        for (int e = 0; e < mm->neq; ++e) {
            if (mm->eq_type[e] != mjEQ_CONNECT && mm->eq_type[e] != mjEQ_JOINT && mm->eq_type[e] != mjEQ_WELD) continue;
            char fallback[32];
            const char *name = mj_id2name(mm, mjOBJ_EQUALITY, e);
            snprintf(fallback, sizeof fallback, "equality%d", e);
            int c = -1;
            for (int k = 0; k < nc; ++k)
                if (strcmp(sd_model_constraint_name(sm, k), name ? name : fallback) == 0) c = k;
            CHECK(c >= 0);
            if (c < 0) continue;
            double a = 0.0, b = 0.0;
            const int r0 = sd_model_constraint_row_offset(sm, c);
            if (mm->eq_type[e] == mjEQ_WELD && sd_model_constraint_nrows(sm, c) == 3) {
                /* torquescale 0: soadyn's BALL at the anchor. MuJoCo 2.2.2 scales the rotation rows'
                 * Jacobian by torquescale (their efc_pos stays): at 0 no force turns the bodies */
                double rot = 0.0;
                int k = 0;
                CHECK(!mj_isSparse(mm));
                for (int i = 0; i < md->nefc; ++i)
                    if (md->efc_type[i] == mjCNSTR_EQUALITY && md->efc_id[i] == e) {
                        if (k < 3) b += md->efc_pos[i] * md->efc_pos[i];
                        else
                            for (int v = 0; v < mm->nv; ++v) rot += fabs(md->efc_J[(size_t)i * mm->nv + v]);
                        ++k;
                    }
                for (int i = 0; i < 3; ++i) a += res[r0 + i] * res[r0 + i];
                CHECK(k == 6 && rot == 0.0);
            } else if (mm->eq_type[e] == mjEQ_WELD) {
                /* soadyn's rows: rotation vector, then the gap in F_A's axes; MuJoCo's: the gap in the
                 * world's, then the vector part of the relative quaternion, sin(angle / 2) n (torquescale 1) */
                CHECK(sd_model_constraint_nrows(sm, c) == 6);
                double mj[6] = {0}, rot_sd = 0.0, rot_mj = 0.0;
                int k = 0;
                for (int i = 0; i < md->nefc && k < 6; ++i)
                    if (md->efc_type[i] == mjCNSTR_EQUALITY && md->efc_id[i] == e) mj[k++] = md->efc_pos[i];
                CHECK(k == 6);
                for (int i = 0; i < 3; ++i) {
                    a += res[r0 + 3 + i] * res[r0 + 3 + i];
                    b += mj[i] * mj[i];
                    rot_sd += res[r0 + i] * res[r0 + i];
                    rot_mj += mj[3 + i] * mj[3 + i];
                }
                rot_mj = 2.0 * asin(fmin(1.0, sqrt(rot_mj)));
                rot_sd = sqrt(rot_sd);
                worst = fmax(worst, fabs(rot_sd - rot_mj) / fmax(1.0, rot_mj));
                gap_sd = fmax(gap_sd, rot_sd);
                gap_mj = fmax(gap_mj, rot_mj);
            } else {
                for (int i = 0; i < sd_model_constraint_nrows(sm, c); ++i) a += res[r0 + i] * res[r0 + i];
                for (int i = 0; i < md->nefc; ++i)
                    if (md->efc_type[i] == mjCNSTR_EQUALITY && md->efc_id[i] == e) b += md->efc_pos[i] * md->efc_pos[i];
            }
            a = sqrt(a);
            b = sqrt(b);
            worst = fmax(worst, fabs(a - b) / fmax(1.0, b));
            gap_sd = fmax(gap_sd, a);
            gap_mj = fmax(gap_mj, b);
        }
        char at[64];
        if (s == 0) snprintf(at, sizeof at, "qpos0 (soadyn's reference)");
        else if (src) snprintf(at, sizeof at, "keyframe %d", s - 1);
        else if (closed) snprintf(at, sizeof at, "a configuration soadyn closed");
        else snprintf(at, sizeof at, "a random configuration");
        printf("%-40s loops at %s: largest gap soadyn %.2e, MuJoCo %.2e\n", label, at, gap_sd, gap_mj);
        if (s == 0) CHECK(gap_sd <= 1e-12 || gap_mj > 1e-9); /* closed at qpos0 unless a weld's relpose opens it */
        if (closed) CHECK(gap_mj <= 1e-12);
    }
    free(q);
    free(res);
    return worst;
}

/* Compare one file (MuJoCo reads mj_path, a stripped copy, or the file itself when NULL); returns
 * 1 if MuJoCo loaded it. */
static int compare_ex(const char *path, const char *mj_path, const char *label, uint64_t *rng, double *worst_M,
                      double *worst_C)
{
    char err[1000] = "";
    mjModel *mm = mj_loadXML(mj_path ? mj_path : path, NULL, err, sizeof err);
    if (mm == NULL) {
        printf("%-40s skipped, MuJoCo 2.2.2 does not load it: %.120s\n", label, err);
        return 0;
    }
    sd_model *sm = NULL;
    sd_error serr;
    if (sd_mjcf_load_file(path, &sm, &serr) != SD_OK) {
        fprintf(stderr, "%s: soadyn: %s\n", label, serr.message);
        CHECK(0);
        mj_deleteModel(mm);
        return 1;
    }
    const int nv = sd_model_nv(sm), nq = sd_model_nq(sm);
    CHECK(mm->nv == nv && mm->nq == nq);
    if (mm->nv != nv || mm->nq != nq) {
        mj_deleteModel(mm);
        sd_model_free(sm);
        return 1;
    }
    /* per MuJoCo joint: soadyn's first coordinate and speed */
    int *jq = malloc(sizeof(int) * (size_t)mm->njnt), *jv = malloc(sizeof(int) * (size_t)mm->njnt);
    int mapped = 1;
    for (int j = 0; j < mm->njnt; ++j) {
        const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
        char buf[512];
        if (name == NULL) { /* soadyn's "<body>/joint<j>", "_2", "_3", ... while a named joint has it */
            const char *bn = mj_id2name(mm, mjOBJ_BODY, mm->jnt_bodyid[j]);
            char body[256];
            if (bn) snprintf(body, sizeof body, "%s", bn);
            else snprintf(body, sizeof body, "body%d", mm->jnt_bodyid[j]);
            snprintf(buf, sizeof buf, "%s/joint%d", body, j);
            for (int suffix = 2; mj_name2id(mm, mjOBJ_JOINT, buf) >= 0; ++suffix)
                snprintf(buf, sizeof buf, "%s/joint%d_%d", body, j, suffix);
            name = buf;
        }
        const int b = sd_model_joint_index(sm, name);
        if (b < 0) {
            fprintf(stderr, "%s: joint %s not in soadyn's model\n", label, name);
            mapped = 0;
            continue;
        }
        jq[j] = sd_model_q_index(sm, b);
        jv[j] = sd_model_v_index(sm, b);
    }
    CHECK(mapped);
    mjData *md = mj_makeData(mm);
    sd_data *sd = sd_data_new(sm);
    const size_t n2 = (size_t)nv * nv;
    double *q = malloc(8 * (size_t)nq), *u = malloc(8 * (size_t)nv), *C = malloc(8 * (size_t)nv),
           *M = malloc(8 * n2), *Mmj = malloc(8 * n2), *T = calloc(n2, 8), *tmp = malloc(8 * n2),
           *ref = malloc(8 * n2), *f = malloc(8 * (size_t)nv), *tdu = malloc(8 * (size_t)nv);
    double eM = 0, eC = 0, eA = 0;
    if (mapped) { /* the reference configuration is MuJoCo's qpos0; the loops agree and close there */
        const double dq = reference_vs_qpos0(mm, sm, jq);
        printf("%-40s reference configuration vs qpos0: largest difference %.2e\n", label, dq);
        CHECK(dq <= 1e-14);
        if (mm->neq > 0) {
            const double dl = loops_vs_mujoco(mm, md, sm, sd, jq, rng, label);
            printf("%-40s loop gaps, soadyn vs MuJoCo, largest difference %.2e\n", label, dl);
            CHECK(dl <= 1e-12);
        }
    }
    for (int trial = 0; trial < 20 && mapped; ++trial) {
        sd_configuration_random(sm, rng, q);
        for (int v = 0; v < nv; ++v) u[v] = 2 * sd_random_uniform(rng) - 1;
        memset(T, 0, 8 * n2);
        memset(tdu, 0, 8 * (size_t)nv);
        for (int j = 0; j < mm->njnt; ++j) {
            const int qa = mm->jnt_qposadr[j], da = mm->jnt_dofadr[j], type = mm->jnt_type[j];
            const int nqj = type == mjJNT_FREE ? 7 : type == mjJNT_BALL ? 4 : 1;
            const int nvj = type == mjJNT_FREE ? 6 : type == mjJNT_BALL ? 3 : 1;
            for (int k = 0; k < nqj; ++k) md->qpos[qa + k] = q[jq[j] + k];
            if (type != mjJNT_FREE) {
                for (int k = 0; k < nvj; ++k) T[(size_t)(da + k) * nv + jv[j] + k] = 1.0;
            } else {
                double R[9], *w = u + jv[j], *vb = u + jv[j] + 3, wxv[3];
                sd_quat_to_m3(q + jq[j] + 3, R);
                for (int a = 0; a < 3; ++a) {
                    for (int b = 0; b < 3; ++b) T[(size_t)(da + a) * nv + jv[j] + 3 + b] = R[3 * a + b];
                    T[(size_t)(da + 3 + a) * nv + jv[j] + a] = 1.0;
                }
                sd_v3_cross(w, vb, wxv);
                sd_m3_mul_v(R, wxv, tdu + da); /* d/dt (R v_b) - R dv_b/dt = R (w x v_b) */
            }
        }
        for (int a = 0; a < nv; ++a) { /* qvel = T u */
            double s = 0;
            for (int b = 0; b < nv; ++b) s += T[(size_t)a * nv + b] * u[b];
            md->qvel[a] = s;
        }
        mj_forward(mm, md);
        mj_fullM(mm, Mmj, md->qM);
        CHECK(sd_mass_matrix(sm, sd, q, M) == SD_OK);
        CHECK(sd_bias_forces(sm, sd, q, u, NULL, C) == SD_OK);
        for (int a = 0; a < nv; ++a) /* tmp = M_mj T */
            for (int b = 0; b < nv; ++b) {
                double s = 0;
                for (int k = 0; k < nv; ++k) s += Mmj[(size_t)a * nv + k] * T[(size_t)k * nv + b];
                tmp[(size_t)a * nv + b] = s;
            }
        for (int a = 0; a < nv; ++a)
            for (int b = 0; b < nv; ++b) {
                double s = 0;
                for (int k = 0; k < nv; ++k) s += T[(size_t)k * nv + a] * tmp[(size_t)k * nv + b];
                ref[(size_t)a * nv + b] = s;
            }
        double d = 0;
        for (size_t i = 0; i < n2; ++i) d = fmax(d, fabs(M[i] - ref[i]));
        eM = fmax(eM, d / max_abs(ref, (int)n2));
        for (int a = 0; a < nv; ++a) {
            double s = md->qfrc_bias[a] - md->qfrc_passive[a];
            for (int k = 0; k < nv; ++k) s += Mmj[(size_t)a * nv + k] * tdu[k];
            f[a] = s;
        }
        for (int a = 0; a < nv; ++a) {
            double s = 0;
            for (int k = 0; k < nv; ++k) s += T[(size_t)k * nv + a] * f[k];
            ref[a] = s;
        }
        d = 0;
        for (int a = 0; a < nv; ++a) d = fmax(d, fabs(C[a] - ref[a]));
        eC = fmax(eC, d / fmax(max_abs(ref, nv), 1e-300));
        /* qdd of the tree (no loops, no forces): MuJoCo's qacc_smooth = T u-dot + Tdot u */
        memset(f, 0, 8 * (size_t)nv);
        CHECK(sd_forward_dynamics(sm, sd, q, u, f, NULL, C) == SD_OK);
        for (int a = 0; a < nv; ++a) {
            double s = 0;
            for (int k = 0; k < nv; ++k) s += T[(size_t)k * nv + a] * (md->qacc_smooth[k] - tdu[k]);
            ref[a] = s;
        }
        d = 0;
        for (int a = 0; a < nv; ++a) d = fmax(d, fabs(C[a] - ref[a]));
        eA = fmax(eA, d / fmax(max_abs(ref, nv), 1e-300));
    }
    printf("%-40s nv %3d: M rel. error %.2e, C (bias - passive) %.2e, qdd %.2e at 20 states\n", label, nv, eM, eC,
           eA);
    CHECK(eM <= tol_now);
    CHECK(eC <= tol_now);
    if (check_qdd) CHECK(eA <= tol_now);
    *worst_M = fmax(*worst_M, eM);
    *worst_C = fmax(*worst_C, eC);
    free(q); free(u); free(C); free(M); free(Mmj); free(T); free(tmp); free(ref); free(f); free(tdu);
    free(jq); free(jv);
    sd_data_free(sd);
    mj_deleteData(md);
    mj_deleteModel(mm);
    sd_model_free(sm);
    return 1;
}

static int compare(const char *path, const char *label, uint64_t *rng, double *worst_M, double *worst_C)
{
    return compare_ex(path, NULL, label, rng, worst_M, worst_C);
}

/* A menagerie file: soadyn reads it as it is, MuJoCo a stripped copy. */
static int compare_stripped(const char *path, const char *label, uint64_t *rng, double *worst_M, double *worst_C)
{
    char dir[] = "/tmp/soadyn_mjcf_strip_XXXXXX", tmp[1100];
    if (!mkdtemp(dir)) return 0;
    snprintf(tmp, sizeof tmp, "%s/model.xml", dir);
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    int ok = 0;
    if (doc) {
        strip_for_mujoco(xmlDocGetRootElement(doc));
        if (xmlSaveFile(tmp, doc) > 0) ok = compare_ex(path, tmp, label, rng, worst_M, worst_C);
        xmlFreeDoc(doc);
    }
    remove(tmp);
    rmdir(dir);
    return ok;
}

int main(int argc, char **argv)
{
    uint64_t rng = 2718281;
    double wM = 0, wC = 0;
    if (argc >= 3 && strcmp(argv[1], "--file") == 0) { /* one file, for investigating */
        compare(argv[2], argv[2], &rng, &wM, &wC);
        return test_summary("test_mujoco_mjcf");
    }
    char dir[] = "/tmp/soadyn_mjcf_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const size_t ninline = sizeof inline_models / sizeof inline_models[0];
    char path[1200];
    for (size_t i = 0; i < ninline; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, inline_models[i][0]);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
            fputs(inline_models[i][1], f);
            fclose(f);
        }
    }
    /* the arm is included by orient.xml; MuJoCo 2.2.2 loads a mesh geom only with its file, so
     * MuJoCo reads a copy of the arm without it, soadyn the original (a mesh geom in a body with
     * an <inertial> is not needed) */
    int compared = 0;
    snprintf(path, sizeof path, "%s/orient.xml", dir);
    {
        char arm[1200];
        snprintf(arm, sizeof arm, "%s/orient_arm.xml", dir);
        /* compare soadyn's original against MuJoCo reading the meshless copy: swap files around */
        sd_model *withmesh = NULL;
        sd_error e;
        CHECK(sd_mjcf_load_file(path, &withmesh, &e) == SD_OK);
        sd_model_free(withmesh);
        FILE *f = fopen(arm, "w");
        if (f) {
            const char *src = inline_models[1][1];
            const char *cut = strstr(src, "    <geom type='mesh'");
            const char *after = cut ? strchr(cut, '\n') + 1 : NULL;
            if (cut) {
                fwrite(src, 1, (size_t)(cut - src), f);
                fputs(after, f);
            }
            fclose(f);
        }
    }
    compared += compare(path, "inline orient.xml (+ include)", &rng, &wM, &wC);
    snprintf(path, sizeof path, "%s/total.xml", dir);
    compared += compare(path, "inline total.xml", &rng, &wM, &wC);
    CHECK(compared == 2);
    for (size_t i = 0; i < ninline; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, inline_models[i][0]);
        remove(path);
    }
    rmdir(dir);
    if (argc >= 3) {
        int own = 0;
        tol_now = 1e-12;
        check_qdd = 1;
        for (size_t i = 0; i < sizeof own_files / sizeof own_files[0]; ++i) {
            snprintf(path, sizeof path, "%s/%s", argv[2], own_files[i]);
            own += compare(path, own_files[i], &rng, &wM, &wC);
        }
        tol_now = TOL;
        check_qdd = 0;
        CHECK(own == (int)(sizeof own_files / sizeof own_files[0]));
    }
    if (argc >= 2 && access(argv[1], R_OK) == 0) {
        int shared = 0;
        for (size_t i = 0; i < sizeof shared_files / sizeof shared_files[0]; ++i) {
            snprintf(path, sizeof path, "%s/%s", argv[1], shared_files[i]);
            shared += compare(path, shared_files[i], &rng, &wM, &wC);
        }
        printf("%d shared MJCF files compared with MuJoCo %d as they are\n", shared, mj_version());
        CHECK(shared >= 5);
        static const char *const menagerie[] = {"cassie_mjcf/cassie.xml", "panda/panda.xml", "iiwa14/iiwa14.xml",
                                                "ur5/ur5e.xml"};
        int stripped = 0;
        for (size_t i = 0; i < sizeof menagerie / sizeof menagerie[0]; ++i) {
            char label[200];
            snprintf(path, sizeof path, "%s/%s", argv[1], menagerie[i]);
            snprintf(label, sizeof label, "%s (MuJoCo: meshless)", menagerie[i]);
            tol_now = strstr(menagerie[i], "panda") ? 1e-7 : strstr(menagerie[i], "cassie") ? 1e-9 : TOL;
            stripped += compare_stripped(path, label, &rng, &wM, &wC);
            tol_now = TOL;
        }
        printf("%d menagerie files compared with MuJoCo reading a copy without meshes and newer options\n",
               stripped);
        CHECK(stripped == 4);
    } else {
        printf("shared models folder absent: only the inline models compared\n");
    }
    printf("largest relative errors (menagerie products of inertia included): M %.2e, C %.2e\n", wM, wC);
    return test_summary("test_mujoco_mjcf");
}
