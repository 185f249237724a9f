/*
 * tests/validation/test_mujoco.c — an independent check of the URDF semantics and the dynamics:
 * MuJoCo (Debian's libmujoco-dev) loads the same fixed-base URDFs of ../shared/models and its mass
 * matrix, bias forces and accelerations must equal soadyn's at random states.
 *
 * MuJoCo's defaults are minded: it fuses fixed joints (as soadyn merges them), reads no
 * drake:rotor_inertia (soadyn's armature from it is given to MuJoCo's dof_armature, so M is compared
 * with it), and reads <dynamics damping>, whose passive force soadyn's C includes (dynamics.h): C is
 * compared with qfrc_bias - qfrc_passive, qdd with qacc at the same applied forces. Geometry is stripped from a copy of each file first (meshes are not shipped,
 * and without geoms there are no contacts). Joints are matched by name. Models MuJoCo refuses
 * (e.g. massless moving links) are reported and skipped; at least four must be compared.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, access */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

/* MuJoCo stores each inertia by its principal moments and axes; for a tensor with products of
 * inertia its 3x3 eigen-decomposition is good to about 1e-8 relative (panda: zeroing the products
 * in the file brings the agreement to 1e-10), so such models are compared at 1e-7. */
static const struct {
    const char *file;
    double tol;
} models[] = {
    {"iiwa_benchmark/kuka_iiwa_robot.urdf", 1e-10}, {"iiwa14/iiwa14_no_collision.urdf", 1e-10},
    {"ur5/ur5_robot.urdf", 1e-10},                  {"double_pendulum/double_pendulum.urdf", 1e-10},
    {"acrobot/acrobot.urdf", 1e-10},                {"panda/panda.urdf", 1e-7},
};

/* Remove every element named visual, collision, gazebo or transmission below node. */
static void strip(xmlNode *node)
{
    for (xmlNode *c = node->children, *next; c; c = next) {
        next = c->next;
        if (c->type == XML_ELEMENT_NODE &&
            (!xmlStrcmp(c->name, BAD_CAST "visual") || !xmlStrcmp(c->name, BAD_CAST "collision") ||
             !xmlStrcmp(c->name, BAD_CAST "gazebo") || !xmlStrcmp(c->name, BAD_CAST "transmission"))) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        } else {
            strip(c);
        }
    }
}

static int write_stripped(const char *src, const char *dst)
{
    xmlDoc *doc = xmlReadFile(src, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) return 0;
    strip(xmlDocGetRootElement(doc));
    const int ok = xmlSaveFile(dst, doc) > 0;
    xmlFreeDoc(doc);
    return ok;
}

/* Compare one model at a few random states; returns 1 if MuJoCo loaded it. */
static int compare(const char *dir, const char *rel, double tol, uint64_t *rng)
{
    char path[1024], tmpdir[] = "/tmp/soadyn_mujoco_XXXXXX", tmp[1100], err[1000] = "";
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (!mkdtemp(tmpdir)) return 0;
    snprintf(tmp, sizeof tmp, "%s/model.urdf", tmpdir);
    sd_model *sm = NULL;
    sd_error serr;
    mjModel *mm = NULL;
    if (sd_urdf_load_file(path, NULL, &sm, &serr) != SD_OK) {
        fprintf(stderr, "%s: soadyn: %s\n", rel, serr.message);
        CHECK(0);
    } else if (!write_stripped(path, tmp) || !(mm = mj_loadXML(tmp, NULL, err, sizeof err))) {
        printf("%s: skipped, MuJoCo does not load it: %s\n", rel, err);
    }
    remove(tmp);
    rmdir(tmpdir);
    if (!sm || !mm) {
        sd_model_free(sm);
        if (mm) mj_deleteModel(mm);
        return 0;
    }
    const int nv = sd_model_nv(sm);
    CHECK(mm->nv == nv);
    CHECK(sd_model_nq(sm) == nv); /* fixed-base models of 1-dof joints: q index = speed index */
    int *dof = malloc((size_t)nv * sizeof(int)), mapped = mm->nv == nv && sd_model_nq(sm) == nv;
    for (int v = 0; v < nv && mapped; ++v) { /* soadyn speed v -> MuJoCo dof */
        const int j = mj_name2id(mm, mjOBJ_JOINT, sd_model_joint_name(sm, sd_model_v_body(sm, v)));
        if (j < 0 || mm->jnt_type[j] == mjJNT_FREE || mm->jnt_type[j] == mjJNT_BALL) mapped = 0;
        else dof[v] = mm->jnt_dofadr[j];
    }
    for (int v = 0; v < nv && mapped; ++v) mm->dof_armature[dof[v]] = sd_model_armature(sm, v);
    CHECK(mapped);
    if (mapped) {
        mjData *md = mj_makeData(mm);
        sd_data *sd = sd_data_new(sm);
        double *q = malloc((size_t)nv * 8), *u = malloc((size_t)nv * 8), *tau = malloc((size_t)nv * 8),
               *qdd = malloc((size_t)nv * 8), *C = malloc((size_t)nv * 8), *M = malloc((size_t)nv * nv * 8),
               *Mmj = malloc((size_t)nv * nv * 8), *ref = malloc((size_t)nv * nv * 8);
        for (int trial = 0; trial < 5; ++trial) {
            sd_configuration_random(sm, rng, q);
            for (int v = 0; v < nv; ++v) {
                u[v] = 2 * sd_random_uniform(rng) - 1;
                tau[v] = 4 * sd_random_uniform(rng) - 2;
                const int j = mm->dof_jntid[dof[v]];
                md->qpos[mm->jnt_qposadr[j]] = q[v]; /* 1-dof joints: q index = v index */
                md->qvel[dof[v]] = u[v];
                md->qfrc_applied[dof[v]] = tau[v];
            }
            mj_forward(mm, md);
            mj_fullM(mm, Mmj, md->qM);
            sd_mass_matrix(sm, sd, q, M);
            sd_bias_forces(sm, sd, q, u, NULL, C);
            for (int a = 0; a < nv; ++a)
                for (int b = 0; b < nv; ++b) ref[a * nv + b] = Mmj[dof[a] * nv + dof[b]];
            if (!CHECK_ARRAY_CLOSE(M, ref, nv * nv, tol, "soadyn M vs MuJoCo qM")) printf("  in %s\n", rel);
            for (int v = 0; v < nv; ++v) ref[v] = md->qfrc_bias[dof[v]] - md->qfrc_passive[dof[v]];
            if (!CHECK_ARRAY_CLOSE(C, ref, nv, tol, "soadyn C vs MuJoCo qfrc_bias - qfrc_passive"))
                printf("  in %s\n", rel);
            sd_forward_dynamics(sm, sd, q, u, tau, NULL, qdd);
            for (int v = 0; v < nv; ++v) ref[v] = md->qacc[dof[v]];
            if (!CHECK_ARRAY_CLOSE(qdd, ref, nv, 10 * tol, "soadyn ABA qdd vs MuJoCo qacc")) printf("  in %s\n", rel);
        }
        printf("%s: nv %d, M, C, qdd compared at 5 random states (tolerance %g)\n", rel, nv, tol);
        free(q); free(u); free(tau); free(qdd); free(C); free(M); free(Mmj); free(ref);
        sd_data_free(sd);
        mj_deleteData(md);
    }
    free(dof);
    mj_deleteModel(mm);
    sd_model_free(sm);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || access(argv[1], R_OK) != 0) {
        printf("skipped: the shared models folder (%s) is not present\n", argc > 1 ? argv[1] : "none given");
        return 77;
    }
    uint64_t rng = 31337;
    int compared = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) compared += compare(argv[1], models[i].file, models[i].tol, &rng);
    printf("%d models compared with MuJoCo %d\n", compared, mj_version());
    CHECK(compared >= 4);
    return test_summary("test_mujoco");
}
