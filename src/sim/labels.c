/*
 * src/sim/labels.c — names of the entries of q and u, for column headers and JSON keys: the joint
 * name, and for hinges of several coordinates a component suffix (see sd_coordinate_label). A
 * flexible body's modal coordinates are "<body>.eta<r>" (r from 1); their speeds, the coordinates'
 * rates like every speed of a 1-dof hinge, carry the same label.
 */
#include <stdio.h>

#include <soadyn/flex.h>

#include "sim/sim_internal.h"

/* Component names per hinge type, for coordinates and for speeds (NULL: a 1-dof hinge). */
static const char *const q_components[SD_HINGE_TYPE_COUNT][7] = {
    [SD_HINGE_SPHERICAL] = {"qw", "qx", "qy", "qz"},
    [SD_HINGE_FREE] = {"x", "y", "z", "qw", "qx", "qy", "qz"},
    [SD_HINGE_UNIVERSAL] = {"1", "2"},
    [SD_HINGE_PLANAR] = {"s1", "s2", "theta"},
};
static const char *const v_components[SD_HINGE_TYPE_COUNT][6] = {
    [SD_HINGE_SPHERICAL] = {"wx", "wy", "wz"},
    [SD_HINGE_FREE] = {"wx", "wy", "wz", "vx", "vy", "vz"},
    [SD_HINGE_UNIVERSAL] = {"1", "2"},
    [SD_HINGE_PLANAR] = {"s1", "s2", "theta"},
};

static int label(const sd_model *model, int body, const char *component, char *buf, size_t size)
{
    const char *joint = sd_model_joint_name(model, body);
    if (!component) return snprintf(buf, size, "%s", joint);
    return snprintf(buf, size, "%s.%s", joint, component);
}

static const char *component(const char *const *table, int body_dofs, int j)
{
    return body_dofs > 1 ? table[j] : NULL;
}

/* The body whose hinge owns coordinate i, -1 if none: bodies hold their coordinates in body order,
 * so the first coordinates q_index(k) increase with k and a bisection finds it in O(log N) (labels
 * of every coordinate of a 100 000-body model are then not O(N^2)). */
static int coordinate_body(const sd_model *model, int i)
{
    int lo = 0, hi = sd_model_nbodies(model) - 1, found = -1;
    while (lo <= hi) { /* the last body with q_index <= i */
        const int mid = lo + (hi - lo) / 2;
        if (sd_model_q_index(model, mid) <= i) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    /* a 0-dof body shares its q_index with the next one, so the last such body holds i if any does;
     * it does not when i is past nq */
    return found >= 0 && i < sd_model_mode_q_index(model, found) + sd_model_body_nmodes(model, found) ? found : -1;
}

/* Modal coordinate r (from 0) of body k. */
static int mode_label(const sd_model *model, int k, int r, char *buf, size_t size)
{
    return snprintf(buf, size, "%s.eta%d", sd_model_body_name(model, k), r + 1);
}

int sd_coordinate_label(const sd_model *model, int i, char *buf, size_t size)
{
    const int k = coordinate_body(model, i);
    if (k < 0) return snprintf(buf, size, "q%d", i);
    if (i >= sd_model_mode_q_index(model, k)) return mode_label(model, k, i - sd_model_mode_q_index(model, k), buf, size);
    const int n = sd_model_hinge_nq(model, k);
    return label(model, k, component(q_components[sd_model_hinge(model, k)], n, i - sd_model_q_index(model, k)),
                 buf, size);
}

int sd_speed_label(const sd_model *model, int i, char *buf, size_t size)
{
    const int k = sd_model_v_body(model, i);
    if (k < 0) return snprintf(buf, size, "u%d", i);
    if (i >= sd_model_mode_v_index(model, k)) return mode_label(model, k, i - sd_model_mode_v_index(model, k), buf, size);
    const int n = sd_model_hinge_nv(model, k);
    return label(model, k, component(v_components[sd_model_hinge(model, k)], n, i - sd_model_v_index(model, k)),
                 buf, size);
}
