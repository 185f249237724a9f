/*
 * src/view/view_page.c — sd_view_write_html: one self-contained HTML file that plays a motion.
 *
 * What the page holds (a JSON script element read by viewer/src/main.js, then the bundled script):
 *   bodies    per body its name, parent, visuals from the model file (view_visuals.c; mesh files
 *             embedded as base64), its skeleton (a capsule from its frame's origin, the joint frame's
 *             child side, to each child's joint frame and each closure point on it; to its centre
 *             of mass when it has neither), its joint axis, the inertia box of every body with mass
 *             (the uniform box of the same mass and principal moments, at the centre of mass along
 *             the principal axes), and for a flexible body its undeformed nodes;
 *   frames    at most VIEW_MAX_FRAMES samples of the trajectory, evenly spread over its rows (the
 *             first and last kept), and per frame and body the world placement from sd_kinematics
 *             at that sample's q (x, y, z, qw, qx, qy, qz);
 *   closures  per frame and closure constraint with two frames the world origins of F_A and F_B
 *             (sd_constraint_frame_world), which meet when the loop is closed;
 *   deflections  per frame and flexible-body node Pi^node eta (001 Eq 3: small rotation, then
 *             translation, body axes; sd_model_node_deflection), which bend the body on the page;
 *   forces    on request, per frame and body the inter-body force f(k) (000 Eq 17; Eq 41 on a flexible
 *             body: its rigid part) from sd_forward_dynamics_ex at the sample's q and u, with zero tau:
 *             what acts is gravity and the model's passive joint forces (damping, springs), which is
 *             what sd_simulate integrates when no joint force is given; world axes about the body's
 *             origin;
 *   columns   the trajectory's columns (q, u.*, energies) at the frames, for the plot;
 *   sizes     the model's size at the first frame (the skeleton's radius, the camera's frame), the
 *             motion's box (the grid), and whether the camera follows the root (sd_view_options).
 * Everything is computed here, before anything is written, so a failure leaves no file; the page is
 * written as "<path>.partial" and renamed when complete (sim/output_file.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/dynamics.h>
#include <soadyn/flex.h>
#include <soadyn/loops.h>
#include <soadyn/soadyn.h> /* SOADYN_VERSION */

#include "flex/flex_body.h"
#include "internal.h"
#include "sim/output_file.h"
#include "sim/sim_trajectory.h"
#include "view/view_internal.h"

enum { VIEW_MAX_FRAMES = 1500 };

void sd_view_options_init(sd_view_options *options)
{
    if (!options) return; /* nothing to fill (was a NULL dereference) */
    if (options) memset(options, 0, sizeof(*options));
}

/* A closure constraint drawn as a pair of points that meet: the origins of its two frames F_A, F_B. */
typedef struct page_closure {
    int constraint;
    int body[2];        /* the bodies carrying F_A, F_B (-1: the inertial frame) */
    double local[2][3]; /* F_A's, F_B's origin in its body's frame (from frame 0) */
} page_closure;

/* Everything the page shows, computed before the file is opened. */
typedef struct page {
    const sd_model *m;
    int nb, nf, nq, nv, ncols;
    size_t nrows;      /* rows of the trajectory (1: the neutral configuration) */
    double *times;     /* nf */
    double *poses;     /* nf x nb x 7 */
    double *forces;    /* nf x nb x 6, or NULL */
    double *values;    /* nf x ncols */
    char **columns;    /* ncols labels */
    int nclosures;
    page_closure *closures; /* the constraints with two frames (not joint couplings) */
    double *closure_points; /* nf x nclosures x 6: F_A's origin, F_B's origin, world */
    double *deflections;    /* per flexible body (in body order) nf x nnodes x 6: Pi^node eta (001 Eq 3) */
    double center[3], size;              /* the model at the first frame: centre, half-diagonal */
    double motion_center[3], motion_size; /* every body origin over the motion */
    double travel;                       /* how far the root body's origin goes from where it starts */
    double force_max;
    double ground; /* the grid's height: 0, or below the lowest body origin of the motion */
    view_visuals vis;
} page;

static void page_free(page *p)
{
    free(p->times);
    free(p->poses);
    free(p->forces);
    free(p->values);
    if (p->columns)
        for (int c = 0; c < p->ncols; ++c) free(p->columns[c]);
    free(p->columns);
    free(p->closures);
    free(p->closure_points);
    free(p->deflections);
    sd_view_visuals_free(&p->vis);
}

static sd_status oom(const char *path, sd_error *err) { return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", path); }

static char *dup_label(const char *prefix, const char *text)
{
    const size_t a = strlen(prefix), b = strlen(text);
    char *s = malloc(a + b + 1);
    if (s) {
        memcpy(s, prefix, a);
        memcpy(s + a, text, b + 1);
    }
    return s;
}

static sd_status make_columns(page *p, const char *path, sd_error *err)
{
    p->ncols = p->nq + p->nv + 3;
    p->columns = calloc((size_t)p->ncols, sizeof(char *));
    if (!p->columns) return oom(path, err);
    char buf[512];
    for (int i = 0; i < p->nq + p->nv; ++i) {
        if (i < p->nq) sd_coordinate_label(p->m, i, buf, sizeof(buf));
        else sd_speed_label(p->m, i - p->nq, buf, sizeof(buf));
        if (!(p->columns[i] = dup_label(i < p->nq ? "" : "u.", buf))) return oom(path, err);
    }
    static const char *const energies[3] = {"kinetic", "potential", "total"};
    for (int e = 0; e < 3; ++e)
        if (!(p->columns[p->nq + p->nv + e] = dup_label("", energies[e]))) return oom(path, err);
    return SD_OK;
}

/* Nodes of every flexible body together (the deflections' rows of one frame). */
static size_t flex_nodes_total(const sd_model *m)
{
    size_t n = 0;
    for (int k = 0; k < sd_model_nbodies(m); ++k) n += (size_t)sd_model_body_nnodes(m, k);
    return n;
}

/* The constraints drawn as closures: those with two frames (couplings tie coordinates, not points). */
static sd_status find_closures(page *p, const char *path, sd_error *err)
{
    const int nc = sd_model_nconstraints(p->m);
    if (nc == 0) return SD_OK;
    p->closures = calloc((size_t)nc, sizeof(page_closure));
    if (!p->closures) return oom(path, err);
    for (int c = 0; c < nc; ++c) {
        if (sd_model_constraint_type(p->m, c) == SD_CONSTRAINT_COUPLING) continue;
        page_closure *pc = &p->closures[p->nclosures++];
        pc->constraint = c;
        sd_model_constraint_bodies(p->m, c, &pc->body[0], &pc->body[1]);
    }
    return SD_OK;
}

/* The world placements (and forces) of one frame at state (q, u); its closures' points and its
 * flexible bodies' node deflections. */
static sd_status frame_state(page *p, sd_data *data, int f, const double *q, const double *u, double *tau,
                             double *qdd, double *residual, const char *path, sd_error *err)
{
    sd_status st;
    if (p->forces) {
        sd_fd_options fo = {0};
        fo.interbody_forces = 1;
        memset(tau, 0, sizeof(double) * (size_t)p->nv);
        st = sd_forward_dynamics_ex(p->m, data, q, u, tau, NULL, qdd, &fo);
    } else {
        st = sd_kinematics(p->m, data, q, NULL, NULL);
    }
    if (st != SD_OK)
        return sd_error_set(err, st, "%s: frame %d (t = %g s): %s", path, f, p->times[f], sd_data_error(data));
    for (int k = 0; k < p->nb; ++k) {
        sd_transform X;
        sd_body_placement_world(p->m, data, k, &X);
        double *o = p->poses + ((size_t)f * (size_t)p->nb + (size_t)k) * 7;
        memcpy(o, X.p, sizeof(X.p));
        sd_m3_to_quat(X.R, o + 3);
        if (p->forces) {
            double *fk = p->forces + ((size_t)f * (size_t)p->nb + (size_t)k) * 6;
            sd_interbody_force(p->m, data, k, SD_FRAME_WORLD, fk);
            const double n = sqrt(fk[3] * fk[3] + fk[4] * fk[4] + fk[5] * fk[5]);
            if (n > p->force_max) p->force_max = n;
        }
    }
    if (p->nclosures > 0) { /* the constraint frames at this q (loops.h: after one of its calls) */
        if ((st = sd_constraint_residuals(p->m, data, q, NULL, residual, NULL)) != SD_OK)
            return sd_error_set(err, st, "%s: frame %d (t = %g s): closure frames: %s", path, f, p->times[f],
                                sd_data_error(data));
        for (int i = 0; i < p->nclosures; ++i)
            for (int side = 0; side < 2; ++side) {
                sd_transform X;
                sd_constraint_frame_world(p->m, data, p->closures[i].constraint, side, &X);
                memcpy(p->closure_points + ((size_t)f * (size_t)p->nclosures + (size_t)i) * 6 + 3 * side, X.p, sizeof(X.p));
            }
    }
    double *defl = p->deflections ? p->deflections + (size_t)f * flex_nodes_total(p->m) * 6 : NULL;
    for (int k = 0; k < p->nb && defl; ++k)
        for (int j = 0; j < sd_model_body_nnodes(p->m, k); ++j, defl += 6)
            if ((st = sd_model_node_deflection(p->m, k, j, q, defl, err)) != SD_OK) return st;
    return SD_OK;
}

static sd_status compute_frames(page *p, const sd_trajectory *tr, int forces, const char *path, sd_error *err)
{
    p->nrows = tr && tr->n > 0 ? tr->n : 1;
    p->nf = p->nrows > VIEW_MAX_FRAMES ? VIEW_MAX_FRAMES : (int)p->nrows;
    const size_t nb = (size_t)p->nb, nf = (size_t)p->nf, nflex = flex_nodes_total(p->m);
    sd_status st = find_closures(p, path, err);
    if (st != SD_OK) return st;
    p->times = calloc(nf, sizeof(double));
    p->poses = malloc(sizeof(double) * nf * nb * 7 + 1);
    p->values = calloc(nf * (size_t)p->ncols + 1, sizeof(double));
    if (forces) p->forces = calloc(nf * nb * 6 + 1, sizeof(double));
    if (p->nclosures) p->closure_points = calloc(nf * (size_t)p->nclosures * 6, sizeof(double));
    if (nflex) p->deflections = calloc(nf * nflex * 6, sizeof(double));
    double *q = calloc((size_t)p->nq + 1, sizeof(double)), *u = calloc((size_t)p->nv + 1, sizeof(double));
    double *tau = calloc((size_t)p->nv + 1, sizeof(double)), *qdd = calloc((size_t)p->nv + 1, sizeof(double));
    double *residual = calloc((size_t)sd_model_nconstraint_rows(p->m) + 1, sizeof(double));
    sd_data *data = sd_data_new(p->m);
    st = p->times && p->poses && p->values && (p->forces || !forces) && (p->closure_points || !p->nclosures) &&
                 (p->deflections || !nflex) && q && u && tau && qdd && residual && data
             ? SD_OK : oom(path, err);
    for (int f = 0; f < p->nf && st == SD_OK; ++f) {
        /* evenly spread rows, the first and the last kept */
        const size_t row = p->nf > 1 ? (size_t)llround((double)f * (double)(p->nrows - 1) / (double)(p->nf - 1)) : 0;
        double kinetic = 0, potential = 0;
        if (tr && tr->n > 0) {
            const double *r = tr->rows + row * tr->stride;
            p->times[f] = r[0];
            memcpy(q, r + 1, sizeof(double) * (size_t)p->nq);
            kinetic = r[1 + p->nq];
            potential = r[2 + p->nq];
            memcpy(u, r + 3 + p->nq, sizeof(double) * (size_t)p->nv);
        } else { /* at rest where the model file puts it (MJCF's qpos0; URDF, SDF: neutral) */
            sd_configuration_reference(p->m, q);
        }
        st = frame_state(p, data, f, q, u, tau, qdd, residual, path, err);
        double *v = p->values + (size_t)f * (size_t)p->ncols;
        memcpy(v, q, sizeof(double) * (size_t)p->nq);
        memcpy(v + p->nq, u, sizeof(double) * (size_t)p->nv);
        v[p->nq + p->nv] = kinetic;
        v[p->nq + p->nv + 1] = potential;
        v[p->nq + p->nv + 2] = kinetic + potential;
    }
    sd_data_free(data);
    free(q);
    free(u);
    free(tau);
    free(qdd);
    free(residual);
    return st;
}

/* A world point x of frame f in body k's frame (k = -1: the inertial frame). */
static void point_in_body(const page *p, int f, int k, const double x[3], double out[3])
{
    if (k < 0) {
        memcpy(out, x, 3 * sizeof(double));
        return;
    }
    const double *o = p->poses + ((size_t)f * (size_t)p->nb + (size_t)k) * 7;
    double R[9], d[3] = {x[0] - o[0], x[1] - o[1], x[2] - o[2]};
    sd_quat_to_m3(o + 3, R);
    sd_m3t_mul_v(R, d, out);
}

/* Grow the box [lo, hi] to hold x. */
static void box_add(double lo[3], double hi[3], const double x[3])
{
    for (int a = 0; a < 3; ++a) {
        if (x[a] < lo[a]) lo[a] = x[a];
        if (x[a] > hi[a]) hi[a] = x[a];
    }
}

/* Centre and half-diagonal of the box [lo, hi], at least `floor`. */
static double box_centre(const double lo[3], const double hi[3], double floor, double centre[3])
{
    double d2 = 0;
    for (int a = 0; a < 3; ++a) {
        centre[a] = 0.5 * (lo[a] + hi[a]);
        d2 += (hi[a] - lo[a]) * (hi[a] - lo[a]);
    }
    return fmax(0.5 * sqrt(d2), floor);
}

/* The model's size where it starts (body origins, centres of mass, flexible nodes and closure points
 * of the first frame: what the camera frames and the skeleton is sized by), the motion's box (the
 * grid), and how far the root travels (the camera follows it when that is farther than the model's
 * size). The closures' local points are taken at the first frame too. */
static void bounds(page *p)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int k = 0; k < p->nb; ++k) {
        const double *o = p->poses + (size_t)k * 7;
        double R[9], c[3];
        sd_quat_to_m3(o + 3, R);
        box_add(lo, hi, o);
        sd_m3_mul_v(R, sd_model_body_com(p->m, k), c);
        for (int a = 0; a < 3; ++a) c[a] += o[a];
        box_add(lo, hi, c);
        for (int j = 0; j < sd_model_body_nnodes(p->m, k); ++j) {
            sd_m3_mul_v(R, sd_flex_body_node_position(p->m->flex[k], j), c);
            for (int a = 0; a < 3; ++a) c[a] += o[a];
            box_add(lo, hi, c);
        }
    }
    for (int i = 0; i < p->nclosures; ++i)
        for (int side = 0; side < 2; ++side) {
            const double *x = p->closure_points + (size_t)i * 6 + 3 * side;
            box_add(lo, hi, x);
            point_in_body(p, 0, p->closures[i].body[side], x, p->closures[i].local[side]);
        }
    p->size = box_centre(lo, hi, 0.05, p->center);
    double mlo[3] = {INFINITY, INFINITY, INFINITY}, mhi[3] = {-INFINITY, -INFINITY, -INFINITY};
    p->travel = 0;
    for (int f = 0; f < p->nf; ++f)
        for (int k = 0; k < p->nb; ++k) {
            const double *o = p->poses + ((size_t)f * (size_t)p->nb + (size_t)k) * 7;
            box_add(mlo, mhi, o);
            if (k == 0) {
                const double d[3] = {o[0] - p->poses[0], o[1] - p->poses[1], o[2] - p->poses[2]};
                p->travel = fmax(p->travel, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
            }
        }
    box_add(mlo, mhi, lo);
    box_add(mlo, mhi, hi);
    p->motion_size = box_centre(mlo, mhi, p->size, p->motion_center);
    p->ground = mlo[2] < 0 ? mlo[2] - 0.05 * p->size : 0.0;
}

/* ---------------------------------------------------------------- writing */

static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
        if (*c == '"' || *c == '\\') fprintf(fp, "\\%c", *c);
        else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&') fprintf(fp, "\\u%04x", *c); /* never "</script" */
        else fputc(*c, fp);
    }
    fputc('"', fp);
}

static void json_numbers(FILE *fp, const double *x, size_t n, const char *fmt)
{
    fputc('[', fp);
    for (size_t i = 0; i < n; ++i) {
        if (i) fputc(',', fp);
        if (isfinite(x[i])) fprintf(fp, fmt, x[i]);
        else fputs("null", fp);
    }
    fputc(']', fp);
}

static void json_placement(FILE *fp, const sd_transform *X)
{
    double q[4];
    sd_m3_to_quat(X->R, q);
    fputs("\"pos\":", fp);
    json_numbers(fp, X->p, 3, "%.9g");
    fputs(",\"quat\":", fp);
    json_numbers(fp, q, 4, "%.9g");
}

/* Bytes as base64 (RFC 4648) in a JSON string. */
static void json_base64(FILE *fp, const unsigned char *b, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    fputc('"', fp);
    for (size_t i = 0; i < n; i += 3) {
        const unsigned long w = (unsigned long)b[i] << 16 | (i + 1 < n ? (unsigned long)b[i + 1] << 8 : 0) |
                                (i + 2 < n ? b[i + 2] : 0);
        fputc(digits[w >> 18 & 63], fp);
        fputc(digits[w >> 12 & 63], fp);
        fputc(i + 1 < n ? digits[w >> 6 & 63] : '=', fp);
        fputc(i + 2 < n ? digits[w & 63] : '=', fp);
    }
    fputc('"', fp);
}

static void json_visual(FILE *fp, const view_visual *v)
{
    static const char *const names[] = {"box", "sphere", "cylinder", "capsule", "ellipsoid", "mesh", "mesh_file"};
    fprintf(fp, "{\"type\":\"%s\",\"size\":", names[v->shape]);
    json_numbers(fp, v->size, 3, "%.9g");
    fputc(',', fp);
    json_placement(fp, &v->X);
    if (v->has_rgba) {
        fputs(",\"rgba\":", fp);
        json_numbers(fp, v->rgba, 4, "%.4g");
    }
    if (v->shape == VIEW_MESH || v->shape == VIEW_MESH_FILE) {
        fputs(",\"name\":", fp);
        json_string(fp, v->name);
    }
    if (v->shape == VIEW_MESH) {
        fputs(",\"vertices\":[", fp);
        for (size_t i = 0; i < 3 * v->nvertices; ++i) fprintf(fp, i ? ",%.7g" : "%.7g", (double)v->vertices[i]);
        fputs("],\"indices\":[", fp);
        for (size_t i = 0; i < 3 * v->ntriangles; ++i) fprintf(fp, i ? ",%u" : "%u", v->indices[i]);
        fputc(']', fp);
    } else if (v->shape == VIEW_MESH_FILE) {
        fprintf(fp, ",\"format\":\"%s\",\"data\":", v->file_format);
        json_base64(fp, v->file_data, v->file_size);
    }
    fputc('}', fp);
}

/* A capsule of radius r along the segment from the origin to c (body frame). */
static void json_segment(FILE *fp, const double c[3], double r)
{
    view_visual v;
    memset(&v, 0, sizeof(v));
    v.shape = VIEW_CAPSULE;
    const double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    v.size[0] = r;
    v.size[1] = 0.5 * len;
    sd_transform_identity(&v.X);
    for (int i = 0; i < 3; ++i) v.X.p[i] = 0.5 * c[i];
    const double z[3] = {c[0] / len, c[1] / len, c[2] / len};
    const double s = sqrt(z[0] * z[0] + z[1] * z[1]);
    if (s > 1e-12) {
        const double axis[3] = {-z[1] / s, z[0] / s, 0};
        sd_m3_axis_angle(axis, atan2(s, z[2]), v.X.R);
    } else if (z[2] < 0) {
        const double axis[3] = {1, 0, 0};
        sd_m3_axis_angle(axis, 3.14159265358979323846, v.X.R);
    }
    json_visual(fp, &v);
}

/* The uniform box of the body's mass and principal moments: half-extents h with
 * I_xx = m (h_y^2 + h_z^2) / 3 and so on, at the centre of mass along the principal axes. */
static int json_inertia_box(FILE *fp, const sd_model *m, int k, double floor_size)
{
    const double mass = sd_model_body_mass(m, k);
    if (!(mass > 0)) return 0;
    double d[3], V[9];
    sd_sym3_eigen(sd_model_body_inertia(m, k), d, V);
    view_visual v;
    memset(&v, 0, sizeof(v));
    v.shape = VIEW_BOX;
    for (int a = 0; a < 3; ++a) {
        const double h2 = 1.5 / mass * (d[(a + 1) % 3] + d[(a + 2) % 3] - d[a]);
        v.size[a] = fmax(h2 > 0 ? sqrt(h2) : 0.0, floor_size);
    }
    memcpy(v.X.R, V, sizeof(V));
    memcpy(v.X.p, sd_model_body_com(m, k), 3 * sizeof(double));
    json_visual(fp, &v);
    return 1;
}

/* The body's joint axis in its frame (revolute, prismatic: the hinge's axis; universal: the first;
 * planar: the normal); 0 for hinges without one axis to draw (fixed, spherical, free). */
static int joint_axis(const sd_model *m, int k, double axis[3], const char **kind)
{
    const sd_hinge_type h = sd_model_hinge(m, k);
    if (h != SD_HINGE_REVOLUTE && h != SD_HINGE_PRISMATIC && h != SD_HINGE_UNIVERSAL && h != SD_HINGE_PLANAR) return 0;
    memcpy(axis, sd_model_axis(m, k), 3 * sizeof(double));
    *kind = h == SD_HINGE_PRISMATIC ? "prismatic" : "revolute";
    return 1;
}

/* One capsule of a body's skeleton, from its origin to x (none when x is the origin). */
static void skeleton_segment(FILE *fp, const double x[3], double r, int *nseg)
{
    if (sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) < 1e-9) return;
    if ((*nseg)++) fputc(',', fp);
    json_segment(fp, x, r);
}

/* The skeleton of body k: a capsule from its origin (where its joint is) to each child's joint and to
 * each closure point it carries; to its centre of mass when it has neither. A flexible body's
 * children on its nodes are left out: its bent line through the nodes reaches them. */
static void write_skeleton(FILE *fp, const page *p, int k, double r)
{
    const sd_model *m = p->m;
    int nseg = 0, nends = 0;
    for (int c = k + 1; c < p->nb; ++c)
        if (sd_model_parent(m, c) == k && !(sd_model_body_nnodes(m, k) > 0 && sd_model_parent_node(m, c) >= 0)) {
            skeleton_segment(fp, sd_model_placement(m, c)->p, r, &nseg);
            ++nends;
        }
    for (int i = 0; i < p->nclosures; ++i)
        for (int side = 0; side < 2; ++side)
            if (p->closures[i].body[side] == k) {
                skeleton_segment(fp, p->closures[i].local[side], r, &nseg);
                ++nends;
            }
    if (nends == 0 && sd_model_body_nnodes(m, k) == 0) skeleton_segment(fp, sd_model_body_com(m, k), r, &nseg);
}

static void write_bodies(FILE *fp, const page *p)
{
    const sd_model *m = p->m;
    const double r = 0.03 * p->size;
    fprintf(fp, "\"skeleton_radius\":%.6g,\"bodies\":[", r);
    size_t node_offset = 0;
    for (int k = 0; k < p->nb; ++k) {
        fputs(k ? ",{\"name\":" : "{\"name\":", fp);
        json_string(fp, sd_model_body_name(m, k));
        fprintf(fp, ",\"parent\":%d,\"visuals\":[", sd_model_parent(m, k));
        int nvis = 0;
        for (int i = 0; i < p->vis.n; ++i)
            if (p->vis.items[i].body == k) {
                if (nvis++) fputc(',', fp);
                json_visual(fp, &p->vis.items[i]);
            }
        fputs("],\"skeleton\":[", fp);
        write_skeleton(fp, p, k, r);
        fputs("],\"inertia_box\":", fp);
        if (!json_inertia_box(fp, m, k, 0.5 * r)) fputs("null", fp);
        double axis[3];
        const char *kind;
        if (joint_axis(m, k, axis, &kind)) {
            fprintf(fp, ",\"joint\":{\"kind\":\"%s\",\"axis\":", kind);
            json_numbers(fp, axis, 3, "%.9g");
            fputc('}', fp);
        }
        const int nn = sd_model_body_nnodes(m, k);
        if (nn > 0) { /* the undeformed nodes, and where this body's rows start in "deflections" */
            fprintf(fp, ",\"flex\":{\"offset\":%zu,\"nodes\":[", node_offset);
            for (int j = 0; j < nn; ++j) {
                if (j) fputc(',', fp);
                json_numbers(fp, sd_flex_body_node_position(m->flex[k], j), 3, "%.9g");
            }
            fputs("]}", fp);
            node_offset += (size_t)nn;
        }
        fputc('}', fp);
    }
    fputs("]", fp);
}

/* The closures: their names and per frame the world points of both sides (meeting when closed);
 * the flexible bodies' node deflections per frame. */
static void write_closures_and_deflections(FILE *fp, const page *p)
{
    fputs(",\n\"closures\":[", fp);
    for (int i = 0; i < p->nclosures; ++i) {
        if (i) fputc(',', fp);
        json_string(fp, sd_model_constraint_name(p->m, p->closures[i].constraint));
    }
    fputs("],\n\"closure_points\":", fp);
    json_numbers(fp, p->closure_points, (size_t)p->nf * (size_t)p->nclosures * 6, "%.7g");
    fprintf(fp, ",\n\"flex_nodes\":%zu,\"deflections\":", flex_nodes_total(p->m));
    json_numbers(fp, p->deflections, (size_t)p->nf * flex_nodes_total(p->m) * 6, "%.7g");
}

static const char style[] =
    "html,body{margin:0;height:100%;font:13px sans-serif;color:#222;background:#fff}"
    "#app{display:flex;height:100%}#view{flex:1;min-width:0;position:relative}"
    "#side{width:440px;padding:10px;box-sizing:border-box;overflow:auto;border-left:1px solid #ddd}"
    "#side h1{font-size:16px;margin:0 0 8px}.row{margin:6px 0;display:flex;gap:8px;align-items:center;flex-wrap:wrap}"
    "#slider{width:100%}#plot{border:1px solid #ddd;width:420px;height:240px}.note,#legend{color:#555;font-size:12px}";

static void write_page(FILE *fp, const page *p, const sd_view_options *o)
{
    const char *title = o->title ? o->title : sd_model_name(p->m);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", fp);
    for (const char *c = title; *c; ++c) { /* HTML text: escape what markup would read */
        if (*c == '<') fputs("&lt;", fp);
        else if (*c == '&') fputs("&amp;", fp);
        else fputc(*c, fp);
    }
    fprintf(fp, "</title><style>%s</style></head>\n<body>\n<script type=\"application/json\" id=\"soadyn-data\">{", style);
    fputs("\"title\":", fp);
    json_string(fp, title);
    /* the camera follows the root on request, and by default when it travels farther than the model's size */
    const int follow = o->follow_root > 0 || (o->follow_root == 0 && p->travel > 2 * p->size);
    fprintf(fp, ",\"show_frames\":%d,\"show_forces\":%d,\"follow\":%d,\"size\":%.6g,\"motion_size\":%.6g,"
                "\"ground\":%.6g,\"center\":",
            o->show_frames ? 1 : 0, o->show_forces ? 1 : 0, follow, p->size, p->motion_size, p->ground);
    json_numbers(fp, p->center, 3, "%.6g");
    fputs(",\"motion_center\":", fp);
    json_numbers(fp, p->motion_center, 3, "%.6g");
    fputc(',', fp);
    write_bodies(fp, p);
    write_closures_and_deflections(fp, p);
    fputs(",\n\"times\":", fp);
    json_numbers(fp, p->times, (size_t)p->nf, "%.9g");
    fputs(",\n\"poses\":", fp);
    json_numbers(fp, p->poses, (size_t)p->nf * (size_t)p->nb * 7, "%.7g");
    fputs(",\n\"forces\":", fp);
    if (p->forces) json_numbers(fp, p->forces, (size_t)p->nf * (size_t)p->nb * 6, "%.7g");
    else fputs("null", fp);
    fprintf(fp, ",\"force_max\":%.9g,\"force_legend\":", p->force_max > 0 ? p->force_max : 1.0);
    char text[1024];
    snprintf(text, sizeof(text),
             "Red arrows: the force each body's parent exerts on it through its hinge, f(k) of 000 Eq 17 "
             "(Eq 41 on a flexible body: its rigid part), from the articulated-body forward dynamics at the "
             "frame's q and u with zero joint forces tau, so under gravity and the model's passive joint "
             "forces (damping, springs) alone; force part in world axes, drawn at the body's origin (the "
             "moment is not drawn). Length: the largest over the motion, %.4g N, is half the model's size.",
             p->force_max);
    json_string(fp, text);
    fputs(",\n\"columns\":[", fp);
    for (int c = 0; c < p->ncols; ++c) {
        if (c) fputc(',', fp);
        json_string(fp, p->columns[c]);
    }
    fputs("],\n\"values\":", fp);
    json_numbers(fp, p->values, (size_t)p->nf * (size_t)p->ncols, "%.9g");
    int n = 0;
    if (p->nrows > (size_t)p->nf)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "%d of the trajectory's %zu samples shown, evenly spread. ",
                      p->nf, p->nrows);
    else if (p->nrows == 1 && p->nf == 1)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "%s", "The model at one configuration. ");
    if (p->vis.meshes_missing)
        n += snprintf(text + n, sizeof(text) - (size_t)n,
                      "%d mesh%s not drawn (%s: not found, or not a format read): such bodies show their "
                      "skeleton. ", p->vis.meshes_missing, p->vis.meshes_missing > 1 ? "es" : "", p->vis.first_missing);
    snprintf(text + n, sizeof(text) - (size_t)n, "Drag to orbit, wheel to zoom, right-drag to pan. soadyn %s.",
             SOADYN_VERSION);
    fputs(",\"note\":", fp);
    json_string(fp, text);
    fputs("}</script>\n<script>", fp);
    fwrite(sd_view_script, 1, sd_view_script_size, fp);
    fputs("</script>\n</body></html>\n", fp);
}

sd_status sd_view_write_html(const sd_model *model, const sd_trajectory *trajectory, const sd_view_options *options,
                             const char *path, sd_error *err)
{
    if (!model || !path) return sd_error_set(err, SD_E_ARGUMENT, "sd_view_write_html: NULL %s", model ? "path" : "model");
    if (trajectory && trajectory->model != model && sd_model_nq(trajectory->model) != sd_model_nq(model))
        return sd_error_set(err, SD_E_ARGUMENT, "sd_view_write_html: the trajectory is of another model (nq %d, not %d)",
                            sd_model_nq(trajectory->model), sd_model_nq(model));
    sd_view_options defaults;
    sd_view_options_init(&defaults);
    const sd_view_options *o = options ? options : &defaults;
    if (o->show_forces && sd_model_nconstraints(model) > 0)
        return sd_error_set(err, SD_E_NOT_SUPPORTED,
                            "%s: inter-body forces on a model with closed loops are not offered in the viewer (the "
                            "tree's forward dynamics would leave out the loops' constraint forces)", sd_model_name(model));
    page p;
    memset(&p, 0, sizeof(p));
    p.m = model;
    p.nb = sd_model_nbodies(model);
    p.nq = sd_model_nq(model);
    p.nv = sd_model_nv(model);
    sd_status st = make_columns(&p, path, err);
    if (st == SD_OK) st = compute_frames(&p, trajectory, o->show_forces, path, err);
    if (st == SD_OK && o->model_path) st = sd_view_read_visuals(model, o->model_path, o, &p.vis, err);
    if (st != SD_OK) {
        page_free(&p);
        return st;
    }
    bounds(&p);
    sim_output_file out;
    st = sim_output_begin(&out, path, err);
    FILE *fp = st == SD_OK ? fopen(sim_output_write_path(&out), "wb") : NULL;
    if (st == SD_OK && !fp) {
        st = sd_error_set(err, SD_E_IO, "%s: cannot create: %s", sim_output_write_path(&out), strerror(errno));
        sim_output_abandon(&out);
    }
    if (fp) {
        /* an incomplete trajectory says so in the page's heading */
        sd_view_options shown = *o;
        char heading[400];
        if (trajectory && trajectory->note[0]) {
            snprintf(heading, sizeof(heading), "%s [%s]", o->title ? o->title : sd_model_name(model), trajectory->note);
            shown.title = heading;
        }
        write_page(fp, &p, &shown);
        const int bad = ferror(fp);
        const int write_errno = errno;
        if (fclose(fp) != 0 || bad) {
            st = sd_error_set(err, SD_E_IO, "%s: write failed: %s", path, strerror(bad ? write_errno : errno));
            sim_output_abandon(&out);
        } else {
            st = sim_output_commit(&out, err);
        }
    }
    page_free(&p);
    return st;
}
