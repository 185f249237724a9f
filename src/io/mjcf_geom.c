/*
 * io/mjcf_geom.c — MJCF's geometry as soadyn needs it: the five ways of writing an orientation,
 * the mass and inertia of primitive geoms (MuJoCo's formulas: a capsule is a cylinder and two
 * hemispheres), a body's inertia as the sum of its geoms' about the common centre of mass, the
 * <inertial> element, and boundinertia on the principal moments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* sd_sym3_eigen */
#include "io/mjcf_internal.h"
#include "model/model_bounds.h"

#define MJCF_PI 3.14159265358979323846

/* ---------------------------------------------------------------- orientations */

static double angle_of(const mjcf_ctx *ctx, double a) { return ctx->compiler.degree ? a * (MJCF_PI / 180.0) : a; }

/* A rotation of `angle` about a unit axis as a quaternion (w, x, y, z). */
static void quat_axis_angle(const double n[3], double angle, double q[4])
{
    const double s = sin(0.5 * angle);
    q[0] = cos(0.5 * angle);
    q[1] = s * n[0];
    q[2] = s * n[1];
    q[3] = s * n[2];
}

/* The smallest rotation taking (0, 0, 1) to the unit vector z (MJCF's zaxis and fromto). */
static void rotation_z_to(const double z[3], double R[9])
{
    const double e[3] = {0.0, 0.0, 1.0};
    double axis[3];
    sd_v3_cross(e, z, axis);
    const double s = sd_v3_norm(axis);
    if (s < 1e-14) {
        /* parallel: identity, or half a turn about x when z points down */
        sd_m3_identity(R);
        if (z[2] < 0.0) {
            R[4] = -1.0;
            R[8] = -1.0;
        }
        return;
    }
    for (int i = 0; i < 3; ++i) axis[i] /= s;
    sd_m3_axis_angle(axis, atan2(s, z[2]), R);
}

/* quat, axisangle's axis, xyaxes, zaxis: directions of any size (1e308 must not overflow into
 * "zero length") */
static int normalize(double *v, int n) { return sd_io_normalize(v, n); }

sd_status mjcf_orientation(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                           double R[9])
{
    sd_m3_identity(R);
    static const char *const forms[5] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
    static const int sizes[5] = {4, 4, 3, 6, 3};
    int which = -1;
    double v[6];
    for (int f = 0; f < 5; ++f) {
        double tmp[6];
        int n = 0;
        sd_status st = mjcf_numbers(ctx, node, kind, cls, owner, forms[f], sizes[f], sizes[f], tmp, &n);
        if (st != SD_OK) return st;
        if (n == 0) continue;
        if (which >= 0)
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: both %s and %s give the orientation (at most one)", owner,
                             forms[which], forms[f]);
        which = f;
        memcpy(v, tmp, sizeof tmp);
    }
    double q[4];
    switch (which) {
    case -1:
        return SD_OK;
    case 0:
        if (!normalize(v, 4))
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: quat=\"%g %g %g %g\" is not a rotation (zero length)",
                             owner, v[0], v[1], v[2], v[3]);
        sd_quat_to_m3(v, R);
        return SD_OK;
    case 1:
        if (!normalize(v, 3))
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: axisangle has an axis of zero length", owner);
        if (fabs(v[3]) > SD_MAX_ANGLE)
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: axisangle angle %g beyond %g", owner, v[3], SD_MAX_ANGLE);
        quat_axis_angle(v, angle_of(ctx, v[3]), q);
        sd_quat_to_m3(q, R);
        return SD_OK;
    case 2: {
        double acc[4] = {1.0, 0.0, 0.0, 0.0};
        for (int i = 0; i < 3; ++i) {
            if (fabs(v[i]) > SD_MAX_ANGLE)
                return mjcf_fail(ctx, node, SD_E_PARSE, "%s: euler angle %g beyond %g", owner, v[i], SD_MAX_ANGLE);
            const char c = ctx->compiler.eulerseq[i];
            double axis[3] = {0.0, 0.0, 0.0};
            axis[(c | 0x20) - 'x'] = 1.0;
            double r[4], t[4];
            quat_axis_angle(axis, angle_of(ctx, v[i]), r);
            /* rotating axes (lower case) compose on the right, fixed axes on the left */
            if (c >= 'a') sd_quat_mul(acc, r, t);
            else sd_quat_mul(r, acc, t);
            memcpy(acc, t, sizeof acc);
        }
        normalize(acc, 4);
        sd_quat_to_m3(acc, R);
        return SD_OK;
    }
    case 3: {
        double *x = v, *y = v + 3, z[3];
        if (!normalize(x, 3))
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: xyaxes has an x axis of zero length", owner);
        const double d = sd_v3_dot(x, y);
        for (int i = 0; i < 3; ++i) y[i] -= d * x[i];
        if (!normalize(y, 3))
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: xyaxes has a y axis of zero length or parallel to x", owner);
        sd_v3_cross(x, y, z);
        for (int i = 0; i < 3; ++i) {
            R[3 * i + 0] = x[i];
            R[3 * i + 1] = y[i];
            R[3 * i + 2] = z[i];
        }
        return SD_OK;
    }
    default:
        if (!normalize(v, 3))
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: zaxis of zero length", owner);
        rotation_z_to(v, R);
        return SD_OK;
    }
}

/* ---------------------------------------------------------------- inertia */

void mjcf_bound_inertia(double I[9], double bound)
{
    double d[3], V[9];
    sd_sym3_eigen(I, d, V);
    if (d[0] >= bound && d[1] >= bound && d[2] >= bound) return;
    for (int i = 0; i < 3; ++i) d[i] = d[i] < bound ? bound : d[i];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            I[3 * i + j] = V[3 * i + 0] * d[0] * V[3 * j + 0] + V[3 * i + 1] * d[1] * V[3 * j + 1] +
                           V[3 * i + 2] * d[2] * V[3 * j + 2];
}

/* Add a rigid part (mass m, centre c, inertia Ic about c, body axes) to running sums: the total
 * mass, the first moment and the inertia about the body origin. */
static void accumulate(double m, const double c[3], const double Ic[9], double *mass, double first[3], double Io[9])
{
    *mass += m;
    const double cc = sd_v3_dot(c, c);
    for (int i = 0; i < 3; ++i) {
        first[i] += m * c[i];
        for (int j = 0; j < 3; ++j) Io[3 * i + j] += Ic[3 * i + j] + m * ((i == j ? cc : 0.0) - c[i] * c[j]);
    }
}

/* Inertia about the origin back to inertia about the centre of mass. */
static void finish(double mass, const double first[3], const double Io[9], double com[3], double I[9])
{
    for (int i = 0; i < 3; ++i) com[i] = mass > 0 ? first[i] / mass : 0.0;
    const double cc = sd_v3_dot(com, com);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            I[3 * i + j] = Io[3 * i + j] - mass * ((i == j ? cc : 0.0) - com[i] * com[j]);
    for (int i = 0; i < 3; ++i) /* exactly symmetric */
        for (int j = i + 1; j < 3; ++j) I[3 * j + i] = I[3 * i + j] = 0.5 * (I[3 * i + j] + I[3 * j + i]);
}

enum { G_PLANE, G_HFIELD, G_SPHERE, G_CAPSULE, G_ELLIPSOID, G_CYLINDER, G_BOX, G_MESH, G_SDF };
static const char *const GEOM_TYPES[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid",
                                         "cylinder", "box", "mesh", "sdf", NULL};

/* One geom's mass, centre and inertia about its centre (body axes); *counts = 0 if it is outside
 * inertiagrouprange. */
static sd_status geom_inertia(const mjcf_ctx *ctx, const xmlNode *g, int cls, const char *owner, int *counts,
                              double *m, double c[3], double Ic[9])
{
    *counts = 0;
    double group = 0.0;
    sd_status st = mjcf_number(ctx, g, MJCF_KIND_GEOM, cls, owner, "group", 0.0, &group);
    if (st != SD_OK) return st;
    if (group < ctx->compiler.group_lo || group > ctx->compiler.group_hi) return SD_OK;
    int type;
    st = mjcf_keyword(ctx, g, MJCF_KIND_GEOM, cls, owner, "type", GEOM_TYPES, G_SPHERE, &type);
    if (st != SD_OK) return st;
    double mass_attr = -1.0, density = 1000.0;
    st = mjcf_number(ctx, g, MJCF_KIND_GEOM, cls, owner, "mass", -1.0, &mass_attr);
    if (st == SD_OK) st = mjcf_number(ctx, g, MJCF_KIND_GEOM, cls, owner, "density", 1000.0, &density);
    if (st != SD_OK) return st;
    char *has_mass = mjcf_attr(ctx, g, MJCF_KIND_GEOM, cls, "mass");
    const int mass_given = has_mass != NULL;
    free(has_mass);
    if ((mass_given && (mass_attr < 0 || mass_attr > SD_MAX_MASS)) || density < 0 || density > SD_MAX_MASS)
        return mjcf_fail(ctx, g, SD_E_PARSE, "%s: mass and density must be in [0, %g]", owner, SD_MAX_MASS);
    /* a geom of no mass contributes nothing, whatever its shape */
    if ((mass_given && mass_attr == 0.0) || (!mass_given && density == 0.0)) return SD_OK;
    if (type == G_MESH || type == G_PLANE || type == G_HFIELD || type == G_SDF) {
        char *mesh = mjcf_attr(ctx, g, MJCF_KIND_GEOM, cls, "mesh");
        st = mjcf_fail(ctx, g, SD_E_NOT_SUPPORTED,
                       "%s: a %s geom%s%s%s is needed for the body's inertia (no <inertial>), and soadyn computes "
                       "inertia only from primitive geoms: give the body an <inertial>", owner, GEOM_TYPES[type],
                       mesh ? " (mesh '" : "", mesh ? mesh : "", mesh ? "')" : "");
        free(mesh);
        return st;
    }
    double size[3] = {0.0, 0.0, 0.0}, fromto[6];
    int nsize = 0, nft = 0;
    st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, owner, "size", 1, 3, size, &nsize);
    if (st == SD_OK) st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, owner, "fromto", 6, 6, fromto, &nft);
    if (st != SD_OK) return st;
    double R[9];
    sd_m3_identity(R);
    c[0] = c[1] = c[2] = 0.0;
    if (nft == 6) {
        if (type == G_SPHERE)
            return mjcf_fail(ctx, g, SD_E_PARSE, "%s: fromto is for capsules, cylinders, boxes and ellipsoids", owner);
        double z[3] = {fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]};
        const double len = sd_v3_norm(z);
        if (!(len > 1e-12) || len > SD_MAX_LENGTH)
            return mjcf_fail(ctx, g, SD_E_PARSE, "%s: fromto's two points %s", owner,
                             len > SD_MAX_LENGTH ? "are too far apart" : "coincide (zero length)");
        for (int i = 0; i < 3; ++i) {
            c[i] = 0.5 * (fromto[i] + fromto[i + 3]);
            z[i] /= len;
        }
        rotation_z_to(z, R);
        /* the half-length along the segment: size[1] of capsules and cylinders, size[2] of boxes and
         * ellipsoids, whose two other half-sizes are both size[0] (as MuJoCo 2.2.2 compiles them) */
        if (type == G_CAPSULE || type == G_CYLINDER) {
            size[1] = 0.5 * len;
        } else {
            size[1] = size[0];
            size[2] = 0.5 * len;
        }
    } else {
        int n;
        st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, owner, "pos", 3, 3, c, &n);
        if (st == SD_OK) st = mjcf_orientation(ctx, g, MJCF_KIND_GEOM, cls, owner, R);
        if (st != SD_OK) return st;
    }
    const int need = type == G_SPHERE ? 1 : (type == G_CAPSULE || type == G_CYLINDER) ? 2 : 3;
    for (int i = 0; i < need; ++i)
        if (!(size[i] > 0.0) || size[i] > SD_MAX_LENGTH)
            return mjcf_fail(ctx, g, SD_E_PARSE, "%s: a %s needs %d positive size%s (at most %g m)%s", owner,
                             GEOM_TYPES[type], need, need > 1 ? "s" : "", SD_MAX_LENGTH,
                             nft == 6 && need > 1 ? " beside fromto" : "");
    for (int i = 0; i < 3; ++i)
        if (fabs(c[i]) > SD_MAX_LENGTH)
            return mjcf_fail(ctx, g, SD_E_PARSE, "%s: pos beyond %g m, the bound of physical models", owner,
                             SD_MAX_LENGTH);
    const double a = size[0], b = size[1], h = 2.0 * size[1];
    double volume, d[3];
    switch (type) {
    case G_SPHERE:
        volume = 4.0 / 3.0 * MJCF_PI * a * a * a;
        break;
    case G_CAPSULE:
        volume = MJCF_PI * a * a * (h + 4.0 / 3.0 * a);
        break;
    case G_CYLINDER:
        volume = MJCF_PI * a * a * h;
        break;
    case G_ELLIPSOID:
        volume = 4.0 / 3.0 * MJCF_PI * a * b * size[2];
        break;
    default: /* box: half-sizes */
        volume = 8.0 * a * b * size[2];
        break;
    }
    *m = mass_given ? mass_attr : density * volume;
    if (!(*m <= SD_MAX_MASS))
        return mjcf_fail(ctx, g, SD_E_PARSE, "%s: mass %g kg beyond %g kg, the bound of physical models", owner, *m,
                         SD_MAX_MASS);
    const double M = *m;
    switch (type) {
    case G_SPHERE:
        d[0] = d[1] = d[2] = 0.4 * M * a * a;
        break;
    case G_CAPSULE: {
        /* the cylinder and the two hemispheres share the mass by volume; each hemisphere's centre
         * lies 3a/8 beyond the cylinder's end */
        const double ms = M * (4.0 / 3.0 * a) / (h + 4.0 / 3.0 * a), mc = M - ms;
        d[0] = d[1] = mc * (3.0 * a * a + h * h) / 12.0 + 0.4 * ms * a * a + ms * h * (3.0 * a + 2.0 * h) / 8.0;
        d[2] = 0.5 * mc * a * a + 0.4 * ms * a * a;
        break;
    }
    case G_CYLINDER:
        d[0] = d[1] = M * (3.0 * a * a + h * h) / 12.0;
        d[2] = 0.5 * M * a * a;
        break;
    case G_ELLIPSOID:
        d[0] = M * (b * b + size[2] * size[2]) / 5.0;
        d[1] = M * (a * a + size[2] * size[2]) / 5.0;
        d[2] = M * (a * a + b * b) / 5.0;
        break;
    default:
        d[0] = M * (b * b + size[2] * size[2]) / 3.0;
        d[1] = M * (a * a + size[2] * size[2]) / 3.0;
        d[2] = M * (a * a + b * b) / 3.0;
        break;
    }
    for (int i = 0; i < 3; ++i) /* R diag(d) R^T */
        for (int j = 0; j < 3; ++j)
            Ic[3 * i + j] = R[3 * i + 0] * d[0] * R[3 * j + 0] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                            R[3 * i + 2] * d[2] * R[3 * j + 2];
    *counts = 1;
    return SD_OK;
}

sd_status mjcf_body_inertia_from_geoms(const mjcf_ctx *ctx, const xmlNode *body, int childclass, const char *owner,
                                       double *mass, double com[3], double I[9])
{
    double first[3] = {0.0, 0.0, 0.0}, Io[9] = {0};
    *mass = 0.0;
    for (const xmlNode *g = body->children; g != NULL; g = g->next) {
        if (!mjcf_is(g, "geom")) continue;
        xmlChar *gname = xmlGetNoNsProp(g, (const xmlChar *)"name");
        char *gowner = sd_io_describe("geom", gname ? (const char *)gname : "(unnamed)");
        xmlFree(gname);
        if (gowner == NULL) return sd_io_fail(ctx->err, SD_E_MEMORY, ctx->source, 0, "out of memory");
        char *full = malloc(strlen(owner) + strlen(gowner) + 3);
        if (full == NULL) {
            free(gowner);
            return sd_io_fail(ctx->err, SD_E_MEMORY, ctx->source, 0, "out of memory");
        }
        sprintf(full, "%s, %s", owner, gowner);
        free(gowner);
        int cls = 0, counts = 0;
        double m = 0.0, c[3], Ic[9];
        sd_status st = mjcf_element_class(ctx, g, full, childclass, &cls);
        if (st == SD_OK) st = geom_inertia(ctx, g, cls, full, &counts, &m, c, Ic);
        free(full);
        if (st != SD_OK) return st;
        if (counts) accumulate(m, c, Ic, mass, first, Io);
    }
    finish(*mass, first, Io, com, I);
    return SD_OK;
}

sd_status mjcf_inertial(const mjcf_ctx *ctx, const xmlNode *node, const char *owner, double *mass, double com[3],
                        double I[9])
{
    int n = 0, nd = 0, nf = 0;
    double d[3], f[6], R[9];
    sd_status st = mjcf_numbers(ctx, node, 0, -1, owner, "pos", 3, 3, com, &n);
    if (st != SD_OK) return st;
    if (n == 0) return mjcf_fail(ctx, node, SD_E_PARSE, "%s: <inertial> has no pos", owner);
    st = mjcf_numbers(ctx, node, 0, -1, owner, "mass", 1, 1, mass, &n);
    if (st != SD_OK) return st;
    if (n == 0) return mjcf_fail(ctx, node, SD_E_PARSE, "%s: <inertial> has no mass", owner);
    if (*mass < 0.0 || *mass > SD_MAX_MASS)
        return mjcf_fail(ctx, node, SD_E_PARSE, "%s: <inertial mass=\"%g\">: must be in [0, %g] kg", owner, *mass,
                         SD_MAX_MASS);
    for (int i = 0; i < 3; ++i)
        if (fabs(com[i]) > SD_MAX_LENGTH)
            return mjcf_fail(ctx, node, SD_E_PARSE, "%s: <inertial pos>: beyond %g m, the bound of physical models",
                             owner, SD_MAX_LENGTH);
    st = mjcf_numbers(ctx, node, 0, -1, owner, "diaginertia", 3, 3, d, &nd);
    if (st == SD_OK) st = mjcf_numbers(ctx, node, 0, -1, owner, "fullinertia", 6, 6, f, &nf);
    if (st == SD_OK) st = mjcf_orientation(ctx, node, 0, -1, owner, R);
    if (st != SD_OK) return st;
    if ((nd == 0) == (nf == 0))
        return mjcf_fail(ctx, node, SD_E_PARSE, "%s: <inertial> needs exactly one of diaginertia and fullinertia",
                         owner);
    const double largest = *mass * SD_MAX_LENGTH * SD_MAX_LENGTH;
    for (int i = 0; i < (nd ? 3 : 6); ++i) {
        const double v = nd ? d[i] : f[i];
        if (fabs(v) > largest || (nd && v < 0.0))
            return mjcf_fail(ctx, node, SD_E_PARSE,
                             "%s: <inertial> inertia %g kg m^2 is negative or beyond mass x (%g m)^2, the bound of "
                             "physical models", owner, v, SD_MAX_LENGTH);
    }
    double Il[9];
    if (nd) {
        memset(Il, 0, sizeof Il);
        Il[0] = d[0];
        Il[4] = d[1];
        Il[8] = d[2];
    } else {
        /* fullinertia: Ixx Iyy Izz Ixy Ixz Iyz, in the axes of the body */
        static const char *const forms[5] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
        for (int i = 0; i < 5; ++i)
            if (xmlHasProp(node, (const xmlChar *)forms[i]))
                return mjcf_fail(ctx, node, SD_E_PARSE, "%s: <inertial> with fullinertia takes no %s", owner,
                                 forms[i]);
        Il[0] = f[0]; Il[4] = f[1]; Il[8] = f[2];
        Il[1] = Il[3] = f[3];
        Il[2] = Il[6] = f[4];
        Il[5] = Il[7] = f[5];
    }
    double T[9];
    sd_m3_mul(R, Il, T);
    sd_m3_mul_t(T, R, I);
    return SD_OK;
}
