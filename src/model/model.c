/*
 * src/model/model.c — read-only queries on a built model, and freeing it. A query with an index out of
 * range (or a NULL model) answers what no valid index can: NULL, -1 or NaN.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void sd_model_free(sd_model *m)
{
    if (!m) return;
    if (m->compiled_code) m->compiled_code->release(m->compiled_code); /* soadyn/compile.h */
    if (m->desc)
        for (int k = 0; k < m->n; ++k) sd_body_desc_free_strings(&m->desc[k]);
    for (int i = 0; i < m->nframes; ++i) free(m->frame_name[i]);
    for (size_t i = 0; i < m->nwarnings; ++i) free(m->warnings[i]);
    free(m->warnings);
    sd_loops_model_free(m->loops);
    sd_flex_model_free(m);
    free(m->frame_name);
    free(m->frame_body);
    free(m->frame_placement);
    free(m->name);
    free(m->parent);
    free(m->subtree_end);
    free(m->last_child);
    free(m->q_index);
    free(m->v_index);
    free(m->nq_k);
    free(m->nv_k);
    free(m->v_body);
    free(m->v_parent);
    free(m->hinge);
    free(m->placement);
    free(m->hinge_axes);
    free(m->hinge_turn);
    free(m->mass);
    free(m->com);
    free(m->inertia_com);
    free(m->rigid);
    free(m->damping);
    free(m->armature);
    free(m->stiffness);
    free(m->spring_ref);
    free(m->desc);
    free(m);
}

static int body_ok(const sd_model *m, int k) { return m && k >= 0 && k < m->n; }

const char *sd_model_name(const sd_model *m) { return m ? m->name : NULL; }
int sd_model_nbodies(const sd_model *m) { return m ? m->n : 0; }
int sd_model_nq(const sd_model *m) { return m ? m->nq : 0; }
int sd_model_nv(const sd_model *m) { return m ? m->nv : 0; }
double sd_model_total_mass(const sd_model *m) { return m ? m->total_mass : NAN; }

double sd_model_time_step(const sd_model *m) { return m ? m->time_step : 0.0; }

void sd_model_gravity(const sd_model *m, double gravity[3])
{
    if (m && gravity) memcpy(gravity, m->gravity, 3 * sizeof(double));
}

int sd_model_body_index(const sd_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int k = 0; k < m->n; ++k)
        if (strcmp(m->desc[k].name, name) == 0) return k;
    return -1;
}

int sd_model_joint_index(const sd_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int k = 0; k < m->n; ++k)
        if (strcmp(m->desc[k].joint_name, name) == 0) return k;
    return -1;
}

const char *sd_model_body_name(const sd_model *m, int k) { return body_ok(m, k) ? m->desc[k].name : NULL; }
const char *sd_model_joint_name(const sd_model *m, int k) { return body_ok(m, k) ? m->desc[k].joint_name : NULL; }
int sd_model_parent(const sd_model *m, int k) { return body_ok(m, k) ? m->parent[k] : -1; }
sd_hinge_type sd_model_hinge(const sd_model *m, int k) { return body_ok(m, k) ? m->hinge[k] : SD_HINGE_TYPE_COUNT; }
int sd_model_q_index(const sd_model *m, int k) { return body_ok(m, k) ? m->q_index[k] : -1; }
int sd_model_v_index(const sd_model *m, int k) { return body_ok(m, k) ? m->v_index[k] : -1; }
int sd_model_hinge_nq(const sd_model *m, int k) { return body_ok(m, k) ? m->nq_k[k] : -1; }
int sd_model_hinge_nv(const sd_model *m, int k) { return body_ok(m, k) ? m->nv_k[k] : -1; }
const sd_transform *sd_model_placement(const sd_model *m, int k) { return body_ok(m, k) ? &m->placement[k] : NULL; }
const double *sd_model_axis(const sd_model *m, int k) { return body_ok(m, k) ? m->hinge_axes + 9 * k : NULL; }
double sd_model_body_mass(const sd_model *m, int k) { return body_ok(m, k) ? m->mass[k] : NAN; }
const double *sd_model_body_com(const sd_model *m, int k) { return body_ok(m, k) ? m->com + 3 * k : NULL; }
const double *sd_model_body_inertia(const sd_model *m, int k) { return body_ok(m, k) ? m->inertia_com + 9 * k : NULL; }
const sd_body_desc *sd_model_body_desc(const sd_model *m, int k) { return body_ok(m, k) ? &m->desc[k] : NULL; }
int sd_model_v_body(const sd_model *m, int v) { return m && v >= 0 && v < m->nv ? m->v_body[v] : -1; }
double sd_model_armature(const sd_model *m, int v) { return m && v >= 0 && v < m->nv ? m->armature[v] : NAN; }
double sd_model_damping(const sd_model *m, int v) { return m && v >= 0 && v < m->nv ? m->damping[v] : NAN; }
double sd_model_stiffness(const sd_model *m, int v) { return m && v >= 0 && v < m->nv ? m->stiffness[v] : NAN; }
double sd_model_spring_ref(const sd_model *m, int v) { return m && v >= 0 && v < m->nv ? m->spring_ref[v] : NAN; }

int sd_model_nframes(const sd_model *m) { return m ? m->nframes : 0; }
int sd_model_frame_index(const sd_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int i = 0; i < m->nframes; ++i)
        if (strcmp(m->frame_name[i], name) == 0) return i;
    return -1;
}
const char *sd_model_frame_name(const sd_model *m, int i) { return m && i >= 0 && i < m->nframes ? m->frame_name[i] : NULL; }
int sd_model_frame_body(const sd_model *m, int i) { return m && i >= 0 && i < m->nframes ? m->frame_body[i] : -1; }
const sd_transform *sd_model_frame_placement(const sd_model *m, int i)
{
    return m && i >= 0 && i < m->nframes ? &m->frame_placement[i] : NULL;
}

size_t sd_model_nwarnings(const sd_model *m) { return m ? m->nwarnings : 0; }
const char *sd_model_warning(const sd_model *m, size_t i) { return m && i < m->nwarnings ? m->warnings[i] : NULL; }

int sd_model_is_ancestor(const sd_model *m, int a, int b)
{
    /* depth-first preorder: a's subtree is the contiguous range a .. subtree_end[a]-1 */
    return body_ok(m, a) && body_ok(m, b) && a <= b && b < m->subtree_end[a];
}
