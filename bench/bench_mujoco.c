/*
 * bench/bench_mujoco.c — the MuJoCo side of soadyn_bench --peers (bench_mujoco.h). Each cell runs
 * the MuJoCo calls that compute what soadyn's call returns, kinematics included, and nothing else
 * (no collision, constraints, actuation, sensors or integration):
 *   ID   = mj_kinematics, mj_comPos, mj_comVel, mj_passive, mj_rne(flg_acc = 1) - qfrc_passive
 *          (sd_inverse_dynamics: tau = M qdd + C, C with the joints' passive forces);
 *   M    = mj_kinematics, mj_comPos, mj_crb, mj_fullM (sd_mass_matrix returns the dense M; MuJoCo's
 *          qM is sparse, so its dense copy is part of the cell);
 *   FD   = mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_passive, mj_rne(flg_acc = 0),
 *          mj_solveM(tau + qfrc_passive - qfrc_bias) (sd_forward_dynamics; what mj_forward does for a
 *          model without contacts or constraints, less its collision, actuation and sensor stages);
 *   M^-1 = mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_solveM on the nv columns of the identity
 *          (sd_mass_matrix_inverse returns the dense M^-1).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_mujoco.h"

#include "internal.h" /* sd_sym3_eigen */

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One soadyn speed as MuJoCo dofs: qvel = T u, column v of T has up to 3 entries. */
typedef struct speed_map {
    int n;
    int dof[3];
    double coef[3];
} speed_map;

struct mj_peer {
    mjModel *m;
    mjData *d;
    int nv;
    speed_map *map;       /* per soadyn speed */
    int *q_of;            /* per 1-dof soadyn speed: MuJoCo qpos address; -1 for free-hinge speeds */
    int *sd_q;            /* per 1-dof soadyn speed: soadyn's coordinate */
    int free_v, free_q;   /* soadyn's free hinge: first speed and coordinate (-1: none) */
    int free_qadr, free_dof;
    double *eye, *minv, *full, *tmp, *tau;
};

const char *mj_peer_version(void)
{
    static char v[16];
    snprintf(v, sizeof v, "%d.%d.%d", mj_version() / 100, mj_version() / 10 % 10, mj_version() % 10);
    return v;
}

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

/* The name of the root link: the first link that is no joint's child. */
static int root_link(xmlNode *robot, char *name, size_t size)
{
    for (xmlNode *l = robot->children; l; l = l->next) {
        if (l->type != XML_ELEMENT_NODE || xmlStrcmp(l->name, BAD_CAST "link")) continue;
        xmlChar *lname = xmlGetProp(l, BAD_CAST "name");
        int is_child = 0;
        for (xmlNode *j = robot->children; j && lname && !is_child; j = j->next) {
            if (j->type != XML_ELEMENT_NODE || xmlStrcmp(j->name, BAD_CAST "joint")) continue;
            for (xmlNode *c = j->children; c && !is_child; c = c->next) {
                if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, BAD_CAST "child")) continue;
                xmlChar *cl = xmlGetProp(c, BAD_CAST "link");
                is_child = cl && !xmlStrcmp(cl, lname);
                xmlFree(cl);
            }
        }
        if (lname && !is_child) {
            snprintf(name, size, "%s", (const char *)lname);
            xmlFree(lname);
            return 1;
        }
        xmlFree(lname);
    }
    return 0;
}

/* Make link `name`'s inertia isotropic, trace / 3 about its centre of mass: what MuJoCo's
 * balanceinertia would do to it (each principal moment set to their mean), done in the file so that
 * soadyn reads the same inertia. 1 if the link was found. */
static int balance_link(xmlNode *robot, const char *name)
{
    for (xmlNode *l = robot->children; l; l = l->next) {
        if (l->type != XML_ELEMENT_NODE || xmlStrcmp(l->name, BAD_CAST "link")) continue;
        xmlChar *lname = xmlGetProp(l, BAD_CAST "name");
        const int match = lname && !strcmp((const char *)lname, name);
        xmlFree(lname);
        if (!match) continue;
        for (xmlNode *in = l->children; in; in = in->next) {
            if (in->type != XML_ELEMENT_NODE || xmlStrcmp(in->name, BAD_CAST "inertial")) continue;
            for (xmlNode *t = in->children; t; t = t->next) {
                if (t->type != XML_ELEMENT_NODE || xmlStrcmp(t->name, BAD_CAST "inertia")) continue;
                double trace = 0;
                static const char *const diag[3] = {"ixx", "iyy", "izz"}, *const off[3] = {"ixy", "ixz", "iyz"};
                for (int i = 0; i < 3; ++i) {
                    xmlChar *v = xmlGetProp(t, BAD_CAST diag[i]);
                    trace += v ? atof((const char *)v) : 0;
                    xmlFree(v);
                }
                char value[64];
                snprintf(value, sizeof value, "%.17g", trace / 3);
                for (int i = 0; i < 3; ++i) {
                    xmlSetProp(t, BAD_CAST diag[i], BAD_CAST value);
                    xmlSetProp(t, BAD_CAST off[i], BAD_CAST "0");
                }
                return 1;
            }
        }
    }
    return 0;
}

/* Rotation matrix (row-major) of URDF's rpy, R = Rz(yaw) Ry(pitch) Rx(roll), and back. */
static void rpy_to_R(const double rpy[3], double R[9])
{
    const double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
                 sy = sin(rpy[2]);
    const double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                         sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                         -sp,     cp * sr,                cp * cr};
    memcpy(R, M, sizeof M);
}

static void R_to_rpy(const double R[9], double rpy[3])
{
    rpy[0] = atan2(R[7], R[8]);
    rpy[1] = atan2(-R[6], sqrt(R[0] * R[0] + R[3] * R[3]));
    rpy[2] = atan2(R[3], R[0]);
}

static double prop(xmlNode *n, const char *name)
{
    xmlChar *v = xmlGetProp(n, BAD_CAST name);
    const double x = v ? atof((const char *)v) : 0;
    xmlFree(v);
    return x;
}

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !xmlStrcmp(c->name, BAD_CAST name)) return c;
    return NULL;
}

/* Every inertia with products of inertia rewritten in its principal axes (the inertial origin's rpy
 * composed with the eigenvectors): the same tensor for soadyn, and one MuJoCo takes as it is, since
 * its own eigen-decomposition of a full tensor is good to about 1e-8 only (test_mujoco.c). */
static void principal_axes(xmlNode *robot)
{
    for (xmlNode *l = robot->children; l; l = l->next) {
        if (l->type != XML_ELEMENT_NODE || xmlStrcmp(l->name, BAD_CAST "link")) continue;
        xmlNode *in = child(l, "inertial"), *t = in ? child(in, "inertia") : NULL;
        if (t == NULL) continue;
        const double ixy = prop(t, "ixy"), ixz = prop(t, "ixz"), iyz = prop(t, "iyz");
        if (ixy == 0 && ixz == 0 && iyz == 0) continue;
        const double I[9] = {prop(t, "ixx"), ixy, ixz, ixy, prop(t, "iyy"), iyz, ixz, iyz, prop(t, "izz")};
        double V[9], d[3], R0[9], R[9], rpy[3] = {0, 0, 0};
        sd_sym3_eigen(I, d, V);
        xmlNode *o = child(in, "origin");
        if (o == NULL) o = xmlNewChild(in, NULL, BAD_CAST "origin", NULL);
        xmlChar *r = xmlGetProp(o, BAD_CAST "rpy");
        if (r) sscanf((const char *)r, "%lf %lf %lf", &rpy[0], &rpy[1], &rpy[2]);
        xmlFree(r);
        rpy_to_R(rpy, R0);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) R[3 * i + j] = R0[3 * i] * V[j] + R0[3 * i + 1] * V[3 + j] + R0[3 * i + 2] * V[6 + j];
        R_to_rpy(R, rpy);
        char text[128];
        snprintf(text, sizeof text, "%.17g %.17g %.17g", rpy[0], rpy[1], rpy[2]);
        xmlSetProp(o, BAD_CAST "rpy", BAD_CAST text);
        static const char *const diag[3] = {"ixx", "iyy", "izz"}, *const off[3] = {"ixy", "ixz", "iyz"};
        for (int i = 0; i < 3; ++i) {
            snprintf(text, sizeof text, "%.17g", d[i]);
            xmlSetProp(t, BAD_CAST diag[i], BAD_CAST text);
            xmlSetProp(t, BAD_CAST off[i], BAD_CAST "0");
        }
    }
}

static mj_peer *new_peer(mjModel *m)
{
    mj_peer *p = calloc(1, sizeof *p);
    p->m = m;
    p->d = mj_makeData(m);
    p->free_v = p->free_q = -1;
    return p;
}

mj_peer *mj_peer_load_urdf(const char *path, int floating, const char *copy_path, char *changed, size_t changed_size,
                           mj_peer **check, char *msg, size_t msg_size)
{
    *check = NULL;
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    changed[0] = '\0';
    if (doc == NULL) {
        snprintf(msg, msg_size, "%s: not read by libxml2", path);
        return NULL;
    }
    xmlNode *robot = xmlDocGetRootElement(doc);
    strip(robot);
    principal_axes(robot);
    char root[256];
    if (floating) {
        if (!root_link(robot, root, sizeof root)) {
            snprintf(msg, msg_size, "%s: no root link", path);
            xmlFreeDoc(doc);
            return NULL;
        }
        xmlNode *world = xmlNewChild(robot, NULL, BAD_CAST "link", NULL);
        xmlNewProp(world, BAD_CAST "name", BAD_CAST "world");
        xmlNode *joint = xmlNewChild(robot, NULL, BAD_CAST "joint", NULL);
        xmlNewProp(joint, BAD_CAST "name", BAD_CAST "soadyn_free");
        xmlNewProp(joint, BAD_CAST "type", BAD_CAST "floating");
        xmlNewProp(xmlNewChild(joint, NULL, BAD_CAST "parent", NULL), BAD_CAST "link", BAD_CAST "world");
        xmlNewProp(xmlNewChild(joint, NULL, BAD_CAST "child", NULL), BAD_CAST "link", BAD_CAST root);
    }
    /* Two loads of the one file: with MuJoCo's fusestatic (the default for URDF, as soadyn merges
     * fixed joints) for timing, and without it for the check of M (MuJoCo re-diagonalises a fused
     * body's inertia to about 1e-8). MuJoCo refuses a principal inertia that breaks A + B >= C and
     * names the body; such links are balanced in the copy, one at a time, until both load. */
    xmlNode *compiler = xmlNewChild(xmlNewChild(robot, NULL, BAD_CAST "mujoco", NULL), NULL, BAD_CAST "compiler", NULL);
    for (int attempt = 0; attempt < 64; ++attempt) {
        mjModel *models[2] = {NULL, NULL};
        char err[1000] = "";
        for (int fuse = 0; fuse < 2 && (fuse == 0 || models[0] != NULL); ++fuse) {
            xmlSetProp(compiler, BAD_CAST "fusestatic", BAD_CAST(fuse ? "true" : "false"));
            if (xmlSaveFile(copy_path, doc) <= 0) {
                snprintf(msg, msg_size, "cannot write %s", copy_path);
                if (models[0]) mj_deleteModel(models[0]);
                xmlFreeDoc(doc);
                return NULL;
            }
            models[fuse] = mj_loadXML(copy_path, NULL, err, sizeof err);
        }
        if (models[1] != NULL) {
            xmlFreeDoc(doc);
            *check = new_peer(models[0]);
            return new_peer(models[1]);
        }
        if (models[0]) mj_deleteModel(models[0]);
        const char *body = strstr(err, "Object name = ");
        char name[256] = "";
        if (strstr(err, "A + B >= C") != NULL && body != NULL) sscanf(body + 14, "%255[^,]", name);
        if (name[0] == '\0' || !balance_link(robot, name)) {
            snprintf(msg, msg_size, "MuJoCo does not load %s: %s", copy_path, err);
            break;
        }
        const size_t len = strlen(changed);
        snprintf(changed + len, changed_size - len, "%s%s", len ? ", " : "", name);
    }
    xmlFreeDoc(doc);
    return NULL;
}

void mj_peer_free(mj_peer *p)
{
    if (p == NULL) return;
    mj_deleteData(p->d);
    mj_deleteModel(p->m);
    free(p->map); free(p->q_of); free(p->sd_q); free(p->eye); free(p->minv); free(p->full); free(p->tmp); free(p->tau);
    free(p);
}

int mj_peer_nv(const mj_peer *p) { return p->m->nv; }

int mj_peer_bind(mj_peer *p, const sd_model *sm, char *msg, size_t msg_size)
{
    const int nv = sd_model_nv(sm), mnv = p->m->nv;
    if (nv != mnv) {
        snprintf(msg, msg_size, "nv %d (soadyn) and %d (MuJoCo) differ", nv, mnv);
        return -1;
    }
    p->nv = nv;
    p->map = calloc((size_t)nv, sizeof *p->map);
    p->q_of = malloc((size_t)nv * sizeof(int));
    p->sd_q = malloc((size_t)nv * sizeof(int));
    for (int k = 0; k < sd_model_nbodies(sm); ++k) {
        const int hv = sd_model_hinge_nv(sm, k), v = sd_model_v_index(sm, k);
        if (hv == 0) continue;
        if (sd_model_hinge(sm, k) == SD_HINGE_FREE) {
            int j = -1;
            for (int i = 0; i < p->m->njnt; ++i)
                if (p->m->jnt_type[i] == mjJNT_FREE) j = i;
            if (j < 0 || p->free_v >= 0) {
                snprintf(msg, msg_size, "the free hinge of %s has no single free joint in MuJoCo", sd_model_body_name(sm, k));
                return -1;
            }
            p->free_v = v;
            p->free_q = sd_model_q_index(sm, k);
            p->free_qadr = p->m->jnt_qposadr[j];
            p->free_dof = p->m->jnt_dofadr[j];
            for (int r = 0; r < 3; ++r) { /* omega: MuJoCo's rotational dofs, body frame like soadyn's */
                p->map[v + r] = (speed_map){1, {p->free_dof + 3 + r, 0, 0}, {1, 0, 0}};
                p->q_of[v + r] = p->q_of[v + 3 + r] = -1;
            }
            continue;
        }
        const char *name = sd_model_joint_name(sm, k);
        const int j = mj_name2id(p->m, mjOBJ_JOINT, name);
        if (hv != 1 || j < 0 || (p->m->jnt_type[j] != mjJNT_HINGE && p->m->jnt_type[j] != mjJNT_SLIDE)) {
            snprintf(msg, msg_size, "joint %s: no 1-dof joint of that name in MuJoCo", name);
            return -1;
        }
        p->map[v] = (speed_map){1, {p->m->jnt_dofadr[j], 0, 0}, {1, 0, 0}};
        p->q_of[v] = p->m->jnt_qposadr[j];
        p->sd_q[v] = sd_model_q_index(sm, k);
        p->m->dof_armature[p->m->jnt_dofadr[j]] = sd_model_armature(sm, v);
    }
    const size_t n2 = (size_t)nv * (size_t)nv;
    p->eye = calloc(n2, sizeof(double));
    p->minv = malloc(n2 * sizeof(double));
    p->full = malloc(n2 * sizeof(double));
    p->tmp = malloc((size_t)nv * sizeof(double));
    p->tau = calloc((size_t)nv, sizeof(double));
    for (int i = 0; i < nv; ++i) p->eye[(size_t)i * nv + i] = 1;
    return 0;
}

void mj_peer_set_state(mj_peer *p, const double *q, const double *u, const double *qdd, const double *tau)
{
    mjData *d = p->d;
    if (p->free_v >= 0) { /* the linear columns of T: MuJoCo's qvel is R v, world axes */
        const double *x = q + p->free_q + 3, w = x[0], a = x[1], b = x[2], c = x[3];
        const double R[9] = {1 - 2 * (b * b + c * c), 2 * (a * b - w * c),     2 * (a * c + w * b),
                             2 * (a * b + w * c),     1 - 2 * (a * a + c * c), 2 * (b * c - w * a),
                             2 * (a * c - w * b),     2 * (b * c + w * a),     1 - 2 * (a * a + b * b)};
        for (int col = 0; col < 3; ++col)
            p->map[p->free_v + 3 + col] =
                (speed_map){3, {p->free_dof, p->free_dof + 1, p->free_dof + 2}, {R[col], R[3 + col], R[6 + col]}};
        for (int i = 0; i < 7; ++i) d->qpos[p->free_qadr + i] = q[p->free_q + i];
    }
    for (int v = 0; v < p->nv; ++v)
        if (p->q_of[v] >= 0) d->qpos[p->q_of[v]] = q[p->sd_q[v]];
    for (int i = 0; i < p->nv; ++i) d->qvel[i] = d->qacc[i] = p->tau[i] = 0;
    for (int v = 0; v < p->nv; ++v)
        for (int e = 0; e < p->map[v].n; ++e) {
            d->qvel[p->map[v].dof[e]] += p->map[v].coef[e] * u[v];
            d->qacc[p->map[v].dof[e]] += p->map[v].coef[e] * qdd[v];
            p->tau[p->map[v].dof[e]] += p->map[v].coef[e] * tau[v]; /* cost only: T^-T tau is not needed */
        }
}

double mj_peer_mass_matrix_difference(mj_peer *p, const double *M)
{
    const int nv = p->nv;
    mj_kinematics(p->m, p->d);
    mj_comPos(p->m, p->d);
    mj_crb(p->m, p->d);
    mj_fullM(p->m, p->full, p->d->qM);
    double worst = 0, norm = 0;
    for (int a = 0; a < nv; ++a)
        for (int b = 0; b < nv; ++b) {
            double s = 0; /* (T^T M_mj T)(a, b) */
            for (int i = 0; i < p->map[a].n; ++i)
                for (int j = 0; j < p->map[b].n; ++j)
                    s += p->map[a].coef[i] * p->map[b].coef[j] * p->full[(size_t)p->map[a].dof[i] * nv + p->map[b].dof[j]];
            worst = fmax(worst, fabs(s - M[(size_t)a * nv + b]));
            norm = fmax(norm, fabs(M[(size_t)a * nv + b]));
        }
    return norm > 0 ? worst / norm : worst;
}

void mj_peer_run(mj_peer *p, bench_cell cell)
{
    const mjModel *m = p->m;
    mjData *d = p->d;
    const int nv = m->nv;
    mj_kinematics(m, d);
    mj_comPos(m, d);
    switch (cell) {
    case CELL_ID:
        mj_comVel(m, d);
        mj_passive(m, d);
        mj_rne(m, d, 1, p->tmp);
        for (int i = 0; i < nv; ++i) p->tmp[i] -= d->qfrc_passive[i];
        break;
    case CELL_M:
        mj_crb(m, d);
        mj_fullM(m, p->full, d->qM);
        break;
    case CELL_FD:
        mj_crb(m, d);
        mj_factorM(m, d);
        mj_comVel(m, d);
        mj_passive(m, d);
        mj_rne(m, d, 0, d->qfrc_bias);
        for (int i = 0; i < nv; ++i) p->tmp[i] = p->tau[i] + d->qfrc_passive[i] - d->qfrc_bias[i];
        mj_solveM(m, d, d->qacc, p->tmp, 1);
        break;
    case CELL_MINV:
        mj_crb(m, d);
        mj_factorM(m, d);
        mj_solveM(m, d, p->minv, p->eye, nv);
        break;
    default:
        break;
    }
}
