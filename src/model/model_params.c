/*
 * src/model/model_params.c — a built model's parameters changed in place (soadyn/params.h): the deep
 * copy, gravity, a body's inertia, a hinge's joint-level terms. Each setter checks the body's
 * description with the new value as the builder would (sd_body_desc_check), then writes the value
 * and everything derived from it, so the next evaluation sees the change:
 *   mass, com, inertia  -> rigid (the spatial inertia M(k) about the body origin), total_mass, and a
 *                          flexible body's precomputed modal integrals (its rigid part is in M_m^rr)
 *   armature, damping,  -> the per-speed arrays and the flags has_armature / has_passive that let
 *   stiffness           the recursions skip the terms
 * and the model's params_generation, which workspaces (sd_check_reader) and batch contexts
 * (batch.c) compare with their own to know that what they hold is stale. The flexible bodies'
 * modal setters are in src/flex/flex_params.c (they need LAPACK).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_body.h"
#include "internal.h"
#include "model_bounds.h"

/* ---------------------------------------------------------------- copy */

/* A copy of count elements of size bytes (a NULL source gives NULL); *ok cleared when out of memory. */
static void *dup_array(const void *src, size_t count, size_t size, int *ok)
{
    if (!src) return NULL;
    void *c = malloc((count > 0 ? count : 1) * size);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    memcpy(c, src, count * size);
    return c;
}

static char *dup_text(const char *s, int *ok) { return s ? dup_array(s, strlen(s) + 1, 1, ok) : NULL; }

/* The strings of a body description, copied (the struct itself already copied by value). */
static void desc_copy_strings(sd_body_desc *d, int *ok)
{
    d->name = dup_text(d->name, ok);
    d->parent = dup_text(d->parent, ok);
    d->joint_name = dup_text(d->joint_name, ok);
    d->mimic_joint = dup_text(d->mimic_joint, ok);
    d->source_file = dup_text(d->source_file, ok);
}

/* The flexible fields: each body made anew from its own description and the model's rigid part,
 * which gives the same precomputed integrals as the build did. */
static sd_status copy_flex(const sd_model *m, sd_model *c, sd_error *err)
{
    const size_t N = (size_t)m->n;
    int ok = 1;
    c->flex = calloc(N > 0 ? N : 1, sizeof *c->flex);
    c->n_modes = dup_array(m->n_modes, N, sizeof(int), &ok);
    c->mode_q_index = dup_array(m->mode_q_index, N, sizeof(int), &ok);
    c->mode_v_index = dup_array(m->mode_v_index, N, sizeof(int), &ok);
    c->parent_node = dup_array(m->parent_node, N, sizeof(int), &ok);
    c->node_placement = dup_array(m->node_placement, N, sizeof(sd_transform), &ok);
    if (!ok || !c->flex) return sd_error_set(err, SD_E_MEMORY, "sd_model_copy: out of memory");
    c->nflex = m->nflex;
    for (int k = 0; k < m->n; ++k) {
        if (!m->flex[k]) continue;
        c->flex[k] = sd_flex_body_new(sd_flex_body_desc(m->flex[k]), m->mass[k], m->com + 3 * k,
                                      m->inertia_com + 9 * k, m->desc[k].name, err);
        if (!c->flex[k]) return err && err->status != SD_OK ? err->status : SD_E_MEMORY;
    }
    return SD_OK;
}

sd_model *sd_model_copy(const sd_model *m, sd_error *err)
{
    if (!m) {
        sd_error_set(err, SD_E_ARGUMENT, "sd_model_copy: model is NULL");
        return NULL;
    }
    sd_model *c = malloc(sizeof *c);
    if (!c) {
        sd_error_set(err, SD_E_MEMORY, "sd_model_copy: out of memory");
        return NULL;
    }
    /* Every scalar by value; every pointer below replaced by its own copy before c can be freed.
     * (A new array in sd_model needs its line here as well as in sd_model_free.) */
    *c = *m;
    c->compiled_code = NULL; /* the copy runs the library until it is compiled itself (soadyn/compile.h) */
    c->compiled = NULL;
    const size_t N = (size_t)m->n, NV = (size_t)m->nv, F = (size_t)m->nframes;
    int ok = 1;
    c->name = dup_text(m->name, &ok);
    c->parent = dup_array(m->parent, N, sizeof(int), &ok);
    c->subtree_end = dup_array(m->subtree_end, N, sizeof(int), &ok);
    c->last_child = dup_array(m->last_child, N, sizeof(int), &ok);
    c->q_index = dup_array(m->q_index, N, sizeof(int), &ok);
    c->v_index = dup_array(m->v_index, N + 1, sizeof(int), &ok);
    c->nq_k = dup_array(m->nq_k, N, sizeof(int), &ok);
    c->nv_k = dup_array(m->nv_k, N, sizeof(int), &ok);
    c->v_body = dup_array(m->v_body, NV, sizeof(int), &ok);
    c->v_parent = dup_array(m->v_parent, NV, sizeof(int), &ok);
    c->hinge = dup_array(m->hinge, N, sizeof(sd_hinge_type), &ok);
    c->placement = dup_array(m->placement, N, sizeof(sd_transform), &ok);
    c->hinge_axes = dup_array(m->hinge_axes, 9 * N, sizeof(double), &ok);
    c->hinge_turn = dup_array(m->hinge_turn, 12 * N, sizeof(double), &ok);
    c->mass = dup_array(m->mass, N, sizeof(double), &ok);
    c->com = dup_array(m->com, 3 * N, sizeof(double), &ok);
    c->inertia_com = dup_array(m->inertia_com, 9 * N, sizeof(double), &ok);
    c->rigid = dup_array(m->rigid, 13 * N, sizeof(double), &ok);
    c->damping = dup_array(m->damping, NV, sizeof(double), &ok);
    c->armature = dup_array(m->armature, NV, sizeof(double), &ok);
    c->stiffness = dup_array(m->stiffness, NV, sizeof(double), &ok);
    c->spring_ref = dup_array(m->spring_ref, NV, sizeof(double), &ok);
    c->frame_body = dup_array(m->frame_body, F, sizeof(int), &ok);
    c->frame_placement = dup_array(m->frame_placement, F, sizeof(sd_transform), &ok);
    /* the string arrays zeroed first, so that a partial copy frees cleanly */
    c->desc = calloc(N > 0 ? N : 1, sizeof *c->desc);
    c->frame_name = calloc(F > 0 ? F : 1, sizeof *c->frame_name);
    c->warnings = calloc(m->nwarnings > 0 ? m->nwarnings : 1, sizeof *c->warnings);
    c->loops = NULL;
    c->flex = NULL;
    c->n_modes = c->mode_q_index = c->mode_v_index = c->parent_node = NULL;
    c->node_placement = NULL;
    c->nflex = 0;
    if (!c->desc || !c->frame_name || !c->warnings) ok = 0;
    for (int k = 0; ok && k < m->n; ++k) {
        c->desc[k] = m->desc[k];
        desc_copy_strings(&c->desc[k], &ok);
    }
    for (size_t i = 0; ok && i < F; ++i) c->frame_name[i] = dup_text(m->frame_name[i], &ok);
    for (size_t i = 0; ok && i < m->nwarnings; ++i) c->warnings[i] = dup_text(m->warnings[i], &ok);
    if (ok && m->loops && !(c->loops = sd_loops_model_copy(m->loops, m->n))) ok = 0;
    sd_status st = ok ? SD_OK : sd_error_set(err, SD_E_MEMORY, "sd_model_copy: out of memory");
    if (st == SD_OK && m->flex) st = copy_flex(m, c, err);
    if (st != SD_OK) {
        if (!c->desc) c->n = 0; /* sd_model_free walks desc and frame_name */
        if (!c->frame_name) c->nframes = 0;
        if (!c->warnings) c->nwarnings = 0;
        sd_model_free(c);
        return NULL;
    }
    return c;
}

/* ---------------------------------------------------------------- setters */

static sd_status bad_body(sd_error *err, const char *fn, const sd_model *m, int body)
{
    if (!m) return sd_error_set(err, SD_E_ARGUMENT, "%s: model is NULL", fn);
    return sd_error_set(err, SD_E_ARGUMENT, "%s: body index %d is out of range (the model has bodies 0 to %d)", fn,
                        body, m->n - 1);
}

/* The model's total mass: the bodies' own, then the flexible bodies' nodes (sd_flex_model_build). */
static double total_mass(const sd_model *m)
{
    double sum = 0.0;
    for (int k = 0; k < m->n; ++k) sum += m->mass[k];
    for (int k = 0; m->flex && k < m->n; ++k) {
        const sd_flex_desc *d = m->flex[k] ? sd_flex_body_desc(m->flex[k]) : NULL;
        for (int j = 0; d && j < d->n_nodes; ++j) sum += d->node_mass[j];
    }
    return sum;
}

sd_status sd_model_set_gravity(sd_model *m, const double gravity[3], sd_error *err)
{
    const char *fn = "sd_model_set_gravity";
    if (!m || !gravity) return sd_error_set(err, SD_E_ARGUMENT, "%s: NULL model or gravity", fn);
    for (int i = 0; i < 3; ++i) /* one by one first, so that the norm cannot overflow (sd_builder_set_gravity) */
        if (!(fabs(gravity[i]) <= SD_MAX_GRAVITY))
            return sd_error_set(err, SD_E_ARGUMENT, "%s: gravity component %d = %g is not finite or beyond %g m/s^2",
                                fn, i, gravity[i], SD_MAX_GRAVITY);
    if (sd_v3_norm(gravity) > SD_MAX_GRAVITY)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: |gravity| = %g m/s^2 is beyond %g m/s^2", fn, sd_v3_norm(gravity),
                            SD_MAX_GRAVITY);
    memcpy(m->gravity, gravity, sizeof m->gravity);
    m->params_generation++;
    m->compiled = NULL; /* the compiled code folded the old values in (soadyn/compile.h) */
    return SD_OK;
}

sd_status sd_model_set_body_inertia(sd_model *m, int k, double mass, const double com[3], const double inertia[9],
                                    sd_error *err)
{
    const char *fn = "sd_model_set_body_inertia";
    if (!m || k < 0 || k >= m->n) return bad_body(err, fn, m, k);
    if (!com || !inertia) return sd_error_set(err, SD_E_ARGUMENT, "%s: NULL centre of mass or inertia", fn);
    sd_body_desc d = m->desc[k];
    d.mass = mass;
    memcpy(d.com, com, sizeof d.com);
    memcpy(d.inertia, inertia, sizeof d.inertia);
    sd_status st = sd_body_desc_check(&d, err);
    if (st != SD_OK) return st;
    if (m->flex && m->flex[k]) { /* its rigid part is in the precomputed M_m^rr: made anew, checked again */
        sd_flex_body *f = sd_flex_body_new(sd_flex_body_desc(m->flex[k]), mass, com, inertia, d.name, err);
        if (!f) return err && err->status != SD_OK ? err->status : SD_E_MODEL;
        sd_flex_body_free(m->flex[k]);
        m->flex[k] = f;
    }
    m->desc[k] = d;
    m->mass[k] = mass;
    memcpy(m->com + 3 * k, com, 3 * sizeof(double));
    memcpy(m->inertia_com + 9 * k, inertia, 9 * sizeof(double));
    sd_rigid_inertia_from_com(mass, com, inertia, m->rigid + 13 * k);
    m->total_mass = total_mass(m);
    m->params_generation++;
    m->compiled = NULL; /* the compiled code folded the old values in (soadyn/compile.h) */
    return SD_OK;
}

/* The joint-level terms a setter may change. */
typedef enum joint_term { TERM_ARMATURE, TERM_DAMPING, TERM_STIFFNESS, TERM_SPRING_REF } joint_term;

/* Recompute the flags that let the recursions skip the joint-level terms (model_builder.c sets them
 * from the descriptions; here from the per-speed values, which may differ within a hinge). */
static void joint_flags(sd_model *m)
{
    m->has_armature = m->has_passive = m->has_free_armature = 0;
    for (int v = 0; v < m->nv; ++v) {
        m->has_armature |= m->armature[v] > 0;
        m->has_passive |= m->damping[v] > 0 || m->stiffness[v] > 0;
    }
    for (int k = 0; k < m->n; ++k) /* a free hinge's armature puts its velocity terms in tau_passive */
        for (int i = 0; m->hinge[k] == SD_HINGE_FREE && i < 6; ++i)
            m->has_free_armature |= m->armature[m->v_index[k] + i] > 0;
    m->has_passive |= m->has_free_armature;
}

static sd_status set_joint_term(sd_model *m, int v, joint_term term, double value, const char *fn, sd_error *err)
{
    if (!m) return sd_error_set(err, SD_E_ARGUMENT, "%s: model is NULL", fn);
    if (v < 0 || v >= m->nv)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: speed index %d is out of range (the model has speeds 0 to %d)", fn,
                            v, m->nv - 1);
    const int k = m->v_body[v], first = m->v_index[k];
    if (v >= first + m->nv_k[k])
        return sd_body_desc_fail(err, SD_E_ARGUMENT, &m->desc[k],
                                 "%s: speed %d is a modal speed of flexible body '%s', which has no joint-level terms "
                                 "(its modal stiffness and damping: sd_model_set_flex_modes)",
                                 fn, v, m->desc[k].name);
    const int spherical = m->hinge[k] == SD_HINGE_SPHERICAL;
    sd_body_desc d = m->desc[k]; /* checked with the new value, the hinge's first speed's otherwise */
    d.armature = m->armature[first];
    d.damping = m->damping[first];
    d.stiffness = m->stiffness[first];
    if (!spherical) d.spring_ref = m->spring_ref[first];
    double *field = term == TERM_ARMATURE ? &d.armature
                    : term == TERM_DAMPING ? &d.damping
                    : term == TERM_STIFFNESS ? &d.stiffness
                                              : &d.spring_ref;
    *field = value;
    const sd_status st = sd_body_desc_check(&d, err);
    if (st != SD_OK) return st;
    switch (term) {
    case TERM_ARMATURE: m->armature[v] = value; break;
    case TERM_DAMPING: m->damping[v] = value; break;
    case TERM_STIFFNESS: /* a spherical hinge's spring is one stiffness (sd_spring_energy_at reads the first) */
        if (spherical)
            for (int i = 0; i < m->nv_k[k]; ++i) m->stiffness[first + i] = value;
        else m->stiffness[v] = value;
        break;
    case TERM_SPRING_REF: /* a spherical hinge's rest orientation is the neutral one: its per-speed 0 stays */
        if (!spherical) m->spring_ref[v] = value;
        break;
    }
    /* the description reports the hinge's first speed (the builder gives every speed the same) */
    m->desc[k].armature = m->armature[first];
    m->desc[k].damping = m->damping[first];
    m->desc[k].stiffness = m->stiffness[first];
    m->desc[k].spring_ref = spherical ? d.spring_ref : m->spring_ref[first];
    joint_flags(m);
    m->params_generation++;
    m->compiled = NULL; /* the compiled code folded the old values in (soadyn/compile.h) */
    return SD_OK;
}

sd_status sd_model_set_armature(sd_model *m, int v, double armature, sd_error *err)
{
    return set_joint_term(m, v, TERM_ARMATURE, armature, "sd_model_set_armature", err);
}

sd_status sd_model_set_damping(sd_model *m, int v, double damping, sd_error *err)
{
    return set_joint_term(m, v, TERM_DAMPING, damping, "sd_model_set_damping", err);
}

sd_status sd_model_set_stiffness(sd_model *m, int v, double stiffness, sd_error *err)
{
    return set_joint_term(m, v, TERM_STIFFNESS, stiffness, "sd_model_set_stiffness", err);
}

sd_status sd_model_set_spring_ref(sd_model *m, int v, double spring_ref, sd_error *err)
{
    return set_joint_term(m, v, TERM_SPRING_REF, spring_ref, "sd_model_set_spring_ref", err);
}
