/*
 * src/model/model_builder.c — collects bodies, frames and warnings, then validates them once and builds
 * the immutable sd_model: bodies renumbered parent-first in depth-first preorder (so every subtree
 * is a contiguous range, which the mass-matrix sparsity and the M^-1 sweep use), cycles and unknown
 * names rejected, numbers checked (finite, signed right, within the physical bounds of
 * model_bounds.h), spatial inertias M(k) formed.
 *
 * Names are copied whole and compared whole: bodies are unique among bodies, joints among joints
 * (a hinge without a joint name takes its body's name, which then counts as a joint name), frames
 * among frames.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_bounds.h"
#include "name_table.h"

struct sd_builder {
    char *name;
    double gravity[3];
    double time_step; /* the file's, 0: none */
    sd_body_desc *bodies;
    int nbodies, cap_bodies;
    char **frame_name, **frame_body;
    sd_transform *frame_placement;
    int nframes, cap_frames;
    char **warnings;
    size_t nwarnings, cap_warnings;
    struct sd_loops_builder *loops; /* closure constraints (src/loops/constraint_model.c) */
    struct sd_flex_builder *flex;   /* flexible-body descriptions (flex_model.c) */
};

struct sd_loops_builder **sd_builder_loops(sd_builder *b) { return &b->loops; }
struct sd_flex_builder **sd_builder_flex(sd_builder *b) { return &b->flex; }

static char *dup_string(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

/* Grow an array of `size`-byte elements to hold at least `need`; 0 on failure. */
static int grow(void **array, int *cap, int need, size_t size)
{
    if (need <= *cap) return 1;
    int new_cap = *cap ? 2 * *cap : 16;
    while (new_cap < need) new_cap *= 2;
    void *p = realloc(*array, (size_t)new_cap * size);
    if (!p) return 0;
    *array = p;
    *cap = new_cap;
    return 1;
}

void sd_body_desc_init(sd_body_desc *desc)
{
    if (!desc) return; /* nothing to fill (was a NULL dereference) */
    memset(desc, 0, sizeof *desc);
    desc->hinge = SD_HINGE_FIXED;
    sd_transform_identity(&desc->placement);
    desc->axis[2] = 1.0;
    desc->axis2[1] = 1.0;
    desc->mimic_multiplier = 1.0;
    desc->parent_node = -1;
}

sd_builder *sd_builder_new(void)
{
    sd_builder *b = calloc(1, sizeof *b);
    if (b) b->gravity[2] = -9.81;
    return b;
}

void sd_body_desc_free_strings(sd_body_desc *d)
{
    free((char *)d->name);
    free((char *)d->parent);
    free((char *)d->joint_name);
    free((char *)d->mimic_joint);
    free((char *)d->source_file);
}

void sd_builder_free(sd_builder *b)
{
    if (!b) return;
    for (int i = 0; i < b->nbodies; ++i) sd_body_desc_free_strings(&b->bodies[i]);
    for (int i = 0; i < b->nframes; ++i) {
        free(b->frame_name[i]);
        free(b->frame_body[i]);
    }
    for (size_t i = 0; i < b->nwarnings; ++i) free(b->warnings[i]);
    free(b->bodies);
    free(b->frame_name);
    free(b->frame_body);
    free(b->frame_placement);
    free(b->warnings);
    free(b->name);
    sd_loops_builder_free(b->loops);
    sd_flex_builder_free(b->flex);
    free(b);
}

sd_status sd_builder_set_name(sd_builder *b, const char *name)
{
    if (!b || !name) return SD_E_ARGUMENT;
    char *c = dup_string(name);
    if (!c) return SD_E_MEMORY;
    free(b->name);
    b->name = c;
    return SD_OK;
}

sd_status sd_builder_set_gravity(sd_builder *b, const double gravity[3])
{
    if (!b || !gravity) return SD_E_ARGUMENT;
    for (int i = 0; i < 3; ++i) /* finite and bounded one by one first, so that the norm cannot overflow */
        if (!(fabs(gravity[i]) <= SD_MAX_GRAVITY)) return SD_E_ARGUMENT;
    if (sd_v3_norm(gravity) > SD_MAX_GRAVITY) return SD_E_ARGUMENT;
    memcpy(b->gravity, gravity, sizeof b->gravity);
    return SD_OK;
}

sd_status sd_builder_set_time_step(sd_builder *b, double dt)
{
    if (!b || !(dt > 0.0 && dt <= 1e3)) return SD_E_ARGUMENT;
    b->time_step = dt;
    return SD_OK;
}

sd_status sd_builder_add_warning(sd_builder *b, const char *message)
{
    if (!b || !message) return SD_E_ARGUMENT;
    if (b->nwarnings == b->cap_warnings) {
        size_t cap = b->cap_warnings ? 2 * b->cap_warnings : 8;
        char **w = realloc(b->warnings, cap * sizeof *w);
        if (!w) return SD_E_MEMORY;
        b->warnings = w;
        b->cap_warnings = cap;
    }
    if (!(b->warnings[b->nwarnings] = dup_string(message))) return SD_E_MEMORY;
    b->nwarnings++;
    return SD_OK;
}

/* Fail with a message about one description, prefixed by "file:line: " when the description says
 * where it came from. Written straight into err, so only the message's own size limits it. */
sd_status sd_body_desc_fail(sd_error *err, sd_status status, const sd_body_desc *d, const char *fmt, ...)
{
    if (!err) return status;
    const size_t size = sizeof err->message;
    int n = 0;
    if (d->source_file && d->source_line > 0) n = snprintf(err->message, size, "%s:%d: ", d->source_file, d->source_line);
    else if (d->source_file) n = snprintf(err->message, size, "%s: ", d->source_file);
    else err->message[0] = '\0';
    if (n >= 0 && (size_t)n < size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message + n, size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    err->status = status;
    return status;
}

/* Keep a warning about one description, prefixed like sd_body_desc_fail's messages; of any length. */
static sd_status desc_warn(sd_builder *b, const sd_body_desc *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static sd_status desc_warn(sd_builder *b, const sd_body_desc *d, const char *fmt, ...)
{
    const char *file = d->source_file ? d->source_file : "";
    const int line = d->source_line;
    const int head = !d->source_file ? 0
                     : line > 0      ? snprintf(NULL, 0, "%s:%d: ", file, line)
                                     : snprintf(NULL, 0, "%s: ", file);
    va_list ap;
    va_start(ap, fmt);
    const int body = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = head >= 0 && body >= 0 ? malloc((size_t)head + (size_t)body + 1) : NULL;
    if (!text) return SD_E_MEMORY;
    if (!d->source_file) text[0] = '\0';
    else if (line > 0) snprintf(text, (size_t)head + 1, "%s:%d: ", file, line);
    else snprintf(text, (size_t)head + 1, "%s: ", file);
    va_start(ap, fmt);
    vsnprintf(text + head, (size_t)body + 1, fmt, ap);
    va_end(ap);
    const sd_status st = sd_builder_add_warning(b, text);
    free(text);
    return st;
}

/* The name of a description's hinge: its joint name, or its body name when it has none. */
static const char *joint_of(const sd_body_desc *d)
{
    return d->joint_name && d->joint_name[0] ? d->joint_name : d->name;
}

static int all_finite(const double *x, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static int placement_finite(const sd_transform *X) { return all_finite(X->R, 9) && all_finite(X->p, 3); }

/* Is R a proper rotation (R^T R = 1 and det R = +1, to 1e-9)? */
static int is_rotation(const double R[9])
{
    double RtR[9];
    sd_m3t_mul(R, R, RtR);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (fabs(RtR[3 * i + j] - (i == j)) > 1e-9) return 0;
    const double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                       R[2] * (R[3] * R[7] - R[4] * R[6]);
    return det > 0;
}

/* One numeric field of a body description and what it may hold. */
typedef struct number_rule {
    const char *what; /* the field, for messages */
    const double *x;
    int n;            /* how many numbers; 0: the field is unused by this description */
    double bound;     /* largest magnitude (model_bounds.h); HUGE_VAL: any finite value */
    const char *unit;
    int nonnegative;
    int of_joint;     /* the message names the joint, else the body */
} number_rule;

/* Where a hinge's coordinates hold a unit quaternion: its first index, -1 for none. */
static int quaternion_at(sd_hinge_type h) { return h == SD_HINGE_SPHERICAL ? 0 : h == SD_HINGE_FREE ? 3 : -1; }

/* The reference coordinates: finite, within the bound of travels (SD_MAX_LENGTH and SD_MAX_ANGLE
 * alike), a quaternion unit to 1e-6 (a looser norm is a wrong number, not rounding). */
static sd_status check_reference(const sd_body_desc *d, sd_error *err)
{
    const int nq = sd_hinge_type_nq(d->hinge), qa = quaternion_at(d->hinge);
    for (int i = 0; i < nq; ++i) {
        const double v = d->reference[i];
        if (!isfinite(v))
            return sd_body_desc_fail(err, SD_E_MODEL, d, "joint '%s': reference coordinate %d is not finite (%g)",
                                     joint_of(d), i, v);
        if (fabs(v) > SD_MAX_LENGTH)
            return sd_body_desc_fail(err, SD_E_MODEL, d,
                                     "joint '%s': reference coordinate %d = %g is beyond %g, the bound of physical "
                                     "models", joint_of(d), i, v, SD_MAX_LENGTH);
    }
    if (qa >= 0) {
        const double *e = d->reference + qa;
        const double norm = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3]);
        if (!(fabs(norm - 1.0) <= 1e-6))
            return sd_body_desc_fail(err, SD_E_MODEL, d,
                                     "joint '%s': the reference quaternion (%g, %g, %g, %g) is not unit (norm %g)",
                                     joint_of(d), e[0], e[1], e[2], e[3], norm);
    }
    return SD_OK;
}

/* Every number finite, signed right and within its physical bound; the message names the field,
 * the value and the bound. Inertia is bounded together with the mass (check_inertia). */
static sd_status check_numbers(const sd_body_desc *d, sd_error *err)
{
    const int prismatic = d->hinge == SD_HINGE_PRISMATIC;
    const double travel = prismatic ? SD_MAX_LENGTH : SD_MAX_ANGLE;
    const char *travel_unit = prismatic ? "m" : "rad";
    const int limited = d->has_limits != 0, mimic = d->mimic_joint != NULL;
    const number_rule rules[] = {
        {"placement offset", d->placement.p, 3, SD_MAX_LENGTH, "m", 0, 1},
        {"placement rotation", d->placement.R, 9, HUGE_VAL, "", 0, 1},
        {"hinge axis", d->axis, 3, HUGE_VAL, "", 0, 1},
        {"second hinge axis", d->axis2, 3, HUGE_VAL, "", 0, 1},
        {"mass", &d->mass, 1, SD_MAX_MASS, "kg", 1, 0},
        {"centre of mass", d->com, 3, SD_MAX_LENGTH, "m", 0, 0},
        {"rotational inertia", d->inertia, 9, HUGE_VAL, "kg m^2", 0, 0},
        {"armature", &d->armature, 1, SD_MAX_ARMATURE, prismatic ? "kg" : "kg m^2", 1, 1},
        {"damping", &d->damping, 1, SD_MAX_DAMPING, "", 1, 1},
        {"stiffness", &d->stiffness, 1, SD_MAX_STIFFNESS, "", 1, 1},
        {"spring reference", &d->spring_ref, 1, travel, travel_unit, 0, 1},
        {"friction", &d->friction, 1, SD_MAX_EFFORT, "", 1, 1},
        {"effort limit", &d->effort_limit, 1, SD_MAX_EFFORT, "", 1, 1},
        {"velocity limit", &d->velocity_limit, 1, SD_MAX_SPEED, prismatic ? "m/s" : "rad/s", 1, 1},
        {"lower limit", &d->lower, limited, travel, travel_unit, 0, 1},
        {"upper limit", &d->upper, limited, travel, travel_unit, 0, 1},
        {"mimic multiplier", &d->mimic_multiplier, mimic, SD_MAX_GEAR_RATIO, "", 0, 1},
        {"mimic offset", &d->mimic_offset, mimic, travel, travel_unit, 0, 1},
    };
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; ++r) {
        const number_rule *rule = &rules[r];
        const char *kind = rule->of_joint ? "joint" : "body", *name = rule->of_joint ? joint_of(d) : d->name;
        const char *space = rule->unit[0] ? " " : "";
        for (int i = 0; i < rule->n; ++i) {
            const double v = rule->x[i];
            if (!isfinite(v))
                return sd_body_desc_fail(err, SD_E_MODEL, d, "%s '%s': %s is not finite (%g)", kind, name, rule->what, v);
            if (rule->nonnegative && v < 0)
                return sd_body_desc_fail(err, SD_E_MODEL, d, "%s '%s': negative %s %g%s%s", kind, name, rule->what, v, space,
                                 rule->unit);
            if (fabs(v) > rule->bound)
                return sd_body_desc_fail(err, SD_E_MODEL, d,
                                 "%s '%s': %s %g%s%s is beyond %g%s%s, the bound of physical models", kind, name,
                                 rule->what, v, space, rule->unit, rule->bound, space, rule->unit);
        }
    }
    if (d->stiffness > 0 && d->hinge != SD_HINGE_REVOLUTE && d->hinge != SD_HINGE_PRISMATIC &&
        d->hinge != SD_HINGE_SPHERICAL)
        return sd_body_desc_fail(err, SD_E_NOT_SUPPORTED, d,
                         "joint '%s': a spring (stiffness %g) on a %s hinge is not offered (revolute, prismatic "
                         "and spherical hinges only)",
                         joint_of(d), d->stiffness, sd_hinge_type_name(d->hinge));
    if (d->hinge == SD_HINGE_SPHERICAL && d->stiffness > 0 && d->spring_ref != 0)
        return sd_body_desc_fail(err, SD_E_NOT_SUPPORTED, d,
                         "joint '%s': a spherical hinge's spring pulls toward the neutral orientation; a spring "
                         "reference %g is not offered",
                         joint_of(d), d->spring_ref);
    if (limited && d->lower > d->upper)
        return sd_body_desc_fail(err, SD_E_MODEL, d, "joint '%s': lower limit %g > upper limit %g", joint_of(d), d->lower,
                         d->upper);
    return d->has_reference ? check_reference(d, err) : SD_OK;
}

sd_status sd_builder_add_body(sd_builder *b, const sd_body_desc *desc, sd_error *err)
{
    if (!b || !desc) return sd_error_set(err, SD_E_ARGUMENT, "sd_builder_add_body: NULL argument");
    if (!desc->name || !desc->name[0]) return sd_body_desc_fail(err, SD_E_MODEL, desc, "a body has no name");
    if ((int)desc->hinge < 0 || desc->hinge >= SD_HINGE_TYPE_COUNT)
        return sd_body_desc_fail(err, SD_E_MODEL, desc, "body '%s': unknown hinge type %d", desc->name, (int)desc->hinge);
    const sd_status checked = check_numbers(desc, err);
    if (checked != SD_OK) return checked;
    if (desc->parent_node < -1)
        return sd_body_desc_fail(err, SD_E_MODEL, desc, "body '%s': parent node %d (a node index >= 0, or -1 for the parent's "
                         "body frame)", desc->name, desc->parent_node);
    if (!is_rotation(desc->placement.R))
        return sd_body_desc_fail(err, SD_E_MODEL, desc, "joint '%s': the placement's rotation is not a proper rotation matrix",
                         joint_of(desc));
    if (!grow((void **)&b->bodies, &b->cap_bodies, b->nbodies + 1, sizeof *b->bodies))
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    sd_body_desc *d = &b->bodies[b->nbodies];
    *d = *desc;
    if (!d->has_reference) memset(d->reference, 0, sizeof d->reference);
    else if (quaternion_at(d->hinge) >= 0) { /* exactly unit, as every configuration's quaternions */
        double *e = d->reference + quaternion_at(d->hinge);
        const double norm = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3]);
        for (int i = 0; i < 4; ++i) e[i] /= norm;
    }
    d->has_reference = d->has_reference != 0;
    d->name = dup_string(desc->name);
    d->parent = dup_string(desc->parent && desc->parent[0] ? desc->parent : NULL);
    d->joint_name = dup_string(desc->joint_name && desc->joint_name[0] ? desc->joint_name : desc->name);
    d->mimic_joint = dup_string(desc->mimic_joint);
    d->source_file = dup_string(desc->source_file);
    if (!d->name || !d->joint_name || (desc->parent && desc->parent[0] && !d->parent) ||
        (desc->mimic_joint && !d->mimic_joint) || (desc->source_file && !d->source_file)) {
        sd_body_desc_free_strings(d);
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    }
    b->nbodies++;
    return SD_OK;
}

sd_status sd_builder_add_frame(sd_builder *b, const char *name, const char *body, const sd_transform *placement,
                               sd_error *err)
{
    if (!b || !name || !name[0] || !body || !placement)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_builder_add_frame: missing name, body or placement");
    if (!placement_finite(placement) || !is_rotation(placement->R))
        return sd_error_set(err, SD_E_MODEL, "frame '%s': placement is not a finite rigid transform", name);
    for (int i = 0; i < 3; ++i)
        if (fabs(placement->p[i]) > SD_MAX_LENGTH)
            return sd_error_set(err, SD_E_MODEL, "frame '%s': placement offset %g m is beyond %g m, the bound of physical models",
                                name, placement->p[i], SD_MAX_LENGTH);
    int cap = b->cap_frames;
    if (!grow((void **)&b->frame_name, &cap, b->nframes + 1, sizeof(char *))) goto oom;
    cap = b->cap_frames;
    if (!grow((void **)&b->frame_body, &cap, b->nframes + 1, sizeof(char *))) goto oom;
    cap = b->cap_frames;
    if (!grow((void **)&b->frame_placement, &cap, b->nframes + 1, sizeof(sd_transform))) goto oom;
    b->cap_frames = cap;
    b->frame_name[b->nframes] = dup_string(name);
    b->frame_body[b->nframes] = dup_string(body);
    b->frame_placement[b->nframes] = *placement;
    if (!b->frame_name[b->nframes] || !b->frame_body[b->nframes]) {
        free(b->frame_name[b->nframes]);
        free(b->frame_body[b->nframes]);
        goto oom;
    }
    b->nframes++;
    return SD_OK;
oom:
    return sd_error_set(err, SD_E_MEMORY, "out of memory");
}

/* ---------------------------------------------------------------- validation of one body */

/* Eigenvalues of a symmetric 3x3 matrix, ascending (closed form, trigonometric). */
static void sym3_eigenvalues(const double A[9], double ev[3])
{
    const double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    const double q = (A[0] + A[4] + A[8]) / 3.0;
    if (p1 <= 1e-300) {
        ev[0] = A[0]; ev[1] = A[4]; ev[2] = A[8];
    } else {
        const double p2 = (A[0] - q) * (A[0] - q) + (A[4] - q) * (A[4] - q) + (A[8] - q) * (A[8] - q) + 2 * p1;
        const double p = sqrt(p2 / 6.0);
        double B[9];
        for (int i = 0; i < 9; ++i) B[i] = (A[i] - (i % 4 == 0 ? q : 0.0)) / p;
        double r = (B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                    B[2] * (B[3] * B[7] - B[4] * B[6])) / 2.0;
        r = r < -1 ? -1 : (r > 1 ? 1 : r);
        const double phi = acos(r) / 3.0;
        ev[2] = q + 2 * p * cos(phi);
        ev[0] = q + 2 * p * cos(phi + 2 * SD_PI / 3);
        ev[1] = 3 * q - ev[0] - ev[2];
    }
    for (int i = 0; i < 2; ++i) /* sort the three */
        for (int j = 0; j < 2 - i; ++j)
            if (ev[j] > ev[j + 1]) { double t = ev[j]; ev[j] = ev[j + 1]; ev[j + 1] = t; }
}

/* Check the inertia against the mass; a doubtful but usable inertia gives a warning. The bound
 * comes from mass and size together (model_bounds.h): no principal moment about the centre of mass
 * exceeds m r^2 for a body whose mass lies within r of it. */
static sd_status check_inertia(sd_builder *b, const sd_body_desc *d, sd_error *err)
{
    const double *I = d->inertia;
    const double largest = d->mass * SD_MAX_LENGTH * SD_MAX_LENGTH;
    double scale = 0;
    for (int i = 0; i < 9; ++i) scale = fmax(scale, fabs(I[i]));
    if (d->mass == 0 && scale > 0)
        return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': zero mass with nonzero rotational inertia", d->name);
    /* no entry of a positive semi-definite matrix exceeds its largest eigenvalue: checked first, as
     * the eigenvalue formula squares the entries */
    if (scale > largest)
        return sd_body_desc_fail(err, SD_E_MODEL, d,
                         "body '%s': rotational inertia entry %g kg m^2 is beyond mass x (%g m)^2 = %g kg m^2, "
                         "the bound of physical models",
                         d->name, scale, SD_MAX_LENGTH, largest);
    const double tol = 1e-9 * fmax(scale, 1e-300);
    if (fabs(I[1] - I[3]) > tol || fabs(I[2] - I[6]) > tol || fabs(I[5] - I[7]) > tol)
        return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': rotational inertia is not symmetric", d->name);
    double ev[3];
    sym3_eigenvalues(I, ev);
    if (ev[0] < -tol)
        return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': rotational inertia is not positive semi-definite (eigenvalue %g)",
                         d->name, ev[0]);
    if (ev[2] > largest * (1 + 1e-12))
        return sd_body_desc_fail(err, SD_E_MODEL, d,
                         "body '%s': principal moment of inertia %g kg m^2 is beyond mass x (%g m)^2 = %g kg m^2, "
                         "the bound of physical models",
                         d->name, ev[2], SD_MAX_LENGTH, largest);
    /* principal moments of a real body satisfy the triangle inequality J1 + J2 >= J3 (a warning kept
     * on the builder; none without one, sd_body_desc_check) */
    if (b && ev[0] + ev[1] < ev[2] - 1e-9 * fmax(ev[2], 1e-300) &&
        desc_warn(b, d,
                  "body '%s': principal moments of inertia (%g, %g, %g) break the triangle inequality; "
                  "physically impossible, accepted as given",
                  d->name, ev[0], ev[1], ev[2]) != SD_OK)
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    return SD_OK;
}

sd_status sd_body_desc_check(const sd_body_desc *d, sd_error *err)
{
    const sd_status st = check_numbers(d, err);
    return st != SD_OK ? st : check_inertia(NULL, d, err);
}

/* u = a / |a|, with |a| formed without overflow or underflow of the squares; returns |a| (0 for
 * a zero vector, infinity when |a| itself is beyond the range). */
static double unit_vector(const double a[3], double u[3])
{
    const double s = fmax(fabs(a[0]), fmax(fabs(a[1]), fabs(a[2])));
    if (s == 0) {
        sd_v3_set(u, 0, 0, 0);
        return 0;
    }
    double b[3] = {a[0] / s, a[1] / s, a[2] / s};
    const double n = sd_v3_norm(b); /* in [1, sqrt 3] */
    for (int i = 0; i < 3; ++i) u[i] = b[i] / n;
    return s * n;
}

/* Normalise the hinge axes and derive the planar in-plane directions t1, t2. An axis is a
 * direction: its length does not matter unless it is so short (below 1e-12) that it is noise. */
static sd_status hinge_axes(const sd_body_desc *d, double out[9], sd_error *err)
{
    memset(out, 0, 9 * sizeof(double));
    if (d->hinge == SD_HINGE_FIXED || d->hinge == SD_HINGE_SPHERICAL || d->hinge == SD_HINGE_FREE) return SD_OK;
    if (!(unit_vector(d->axis, out) > 1e-12))
        return sd_body_desc_fail(err, SD_E_MODEL, d, "joint '%s': hinge axis has zero length", d->joint_name);
    if (d->hinge == SD_HINGE_UNIVERSAL) {
        double c[3];
        if (!(unit_vector(d->axis2, out + 3) > 1e-12))
            return sd_body_desc_fail(err, SD_E_MODEL, d, "joint '%s': second hinge axis has zero length", d->joint_name);
        sd_v3_cross(out, out + 3, c);
        if (sd_v3_norm(c) < 1e-9)
            return sd_body_desc_fail(err, SD_E_MODEL, d, "joint '%s': universal joint axes are parallel", d->joint_name);
    } else if (d->hinge == SD_HINGE_PLANAR) {
        /* t1: the unit vector most perpendicular to n among x, y, z, orthogonalised; t2 = n x t1 */
        const double *n = out;
        int j = 0;
        for (int i = 1; i < 3; ++i)
            if (fabs(n[i]) < fabs(n[j])) j = i;
        double e[3] = {0, 0, 0}, t1[3];
        e[j] = 1.0;
        for (int i = 0; i < 3; ++i) t1[i] = e[i] - n[j] * n[i];
        const double nt = sd_v3_norm(t1);
        for (int i = 0; i < 3; ++i) out[3 + i] = t1[i] / nt;
        sd_v3_cross(n, out + 3, out + 6);
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- build */

/* Depth-first preorder of the bodies (children in insertion order), iterative so that a 100 000
 * body chain does not exhaust the stack. Returns the number of bodies reached from the roots;
 * fewer than n means the rest sit on cycles; -1 when memory runs out. */
static int preorder(int n, const int *parent_in, int *order)
{
    const size_t N = (size_t)(n > 0 ? n : 1);
    int *first_child = malloc(N * sizeof(int)), *next_sibling = malloc(N * sizeof(int)),
        *last_child = malloc(N * sizeof(int)), *stack = malloc(N * sizeof(int));
    int count = -1;
    if (!first_child || !next_sibling || !last_child || !stack) goto done;
    count = 0;
    for (int i = 0; i < n; ++i) first_child[i] = next_sibling[i] = last_child[i] = -1;
    int root_first = -1, root_last = -1;
    for (int i = 0; i < n; ++i) { /* link children in insertion order */
        const int p = parent_in[i];
        int *first = p < 0 ? &root_first : &first_child[p], *last = p < 0 ? &root_last : &last_child[p];
        if (*first < 0) *first = i;
        else next_sibling[*last] = i;
        *last = i;
    }
    int top = 0;
    /* push roots in reverse so the first root is visited first */
    for (int r = root_first; r >= 0; r = next_sibling[r]) stack[top++] = r;
    for (int i = 0, j = top - 1; i < j; ++i, --j) { int t = stack[i]; stack[i] = stack[j]; stack[j] = t; }
    while (top > 0) {
        const int k = stack[--top];
        order[count++] = k;
        int nc = 0;
        for (int c = first_child[k]; c >= 0; c = next_sibling[c]) stack[top + nc++] = c;
        for (int i = 0, j = nc - 1; i < j; ++i, --j) { int t = stack[top + i]; stack[top + i] = stack[top + j]; stack[top + j] = t; }
        top += nc;
    }
done:
    free(first_child);
    free(next_sibling);
    free(last_child);
    free(stack);
    return count;
}

static sd_status resolve_parents(const sd_builder *b, sd_name_table *bodies, int *parent_in, sd_error *err)
{
    for (int i = 0; i < b->nbodies; ++i) {
        const sd_body_desc *d = &b->bodies[i];
        const int existing = sd_name_table_insert(bodies, d->name, i);
        if (existing == -2) return sd_error_set(err, SD_E_MEMORY, "out of memory");
        if (existing >= 0) return sd_body_desc_fail(err, SD_E_MODEL, d, "duplicate body name '%s'", d->name);
    }
    for (int i = 0; i < b->nbodies; ++i) {
        const sd_body_desc *d = &b->bodies[i];
        parent_in[i] = -1;
        if (!d->parent) continue;
        parent_in[i] = sd_name_table_find(bodies, d->parent);
        if (parent_in[i] < 0)
            return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': unknown parent body '%s'", d->name, d->parent);
        if (parent_in[i] == i) return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s' is its own parent", d->name);
    }
    return SD_OK;
}

/* Joint names unique among joints (bodies are another namespace), and each mimic joint naming
 * another joint of the model. */
static sd_status check_joint_names(const sd_model *m, sd_error *err)
{
    sd_name_table *joints = sd_name_table_new(m->n);
    if (!joints) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    sd_status st = SD_OK;
    for (int k = 0; k < m->n && st == SD_OK; ++k) {
        const sd_body_desc *d = &m->desc[k];
        const int existing = sd_name_table_insert(joints, d->joint_name, k);
        if (existing == -2) {
            st = sd_error_set(err, SD_E_MEMORY, "out of memory");
        } else if (existing >= 0) {
            const sd_body_desc *first = &m->desc[existing];
            const int defaulted = strcmp(first->joint_name, first->name) == 0 || strcmp(d->joint_name, d->name) == 0;
            st = sd_body_desc_fail(err, SD_E_MODEL, d, "duplicate joint name '%s' (the hinges of bodies '%s' and '%s')%s",
                           d->joint_name, first->name, d->name,
                           defaulted ? "; a hinge without a joint name takes its body's name" : "");
        }
    }
    for (int k = 0; k < m->n && st == SD_OK; ++k) {
        const sd_body_desc *d = &m->desc[k];
        if (!d->mimic_joint) continue;
        const int target = sd_name_table_find(joints, d->mimic_joint);
        if (target < 0 || target == k)
            st = sd_body_desc_fail(err, SD_E_MODEL, d, "joint '%s': mimic joint '%s' %s", d->joint_name, d->mimic_joint,
                           target < 0 ? "is not a joint of the model" : "is the joint itself");
    }
    sd_name_table_free(joints);
    return st;
}

/* Allocate the model's arrays for n bodies; 0 when out of memory. */
static int model_alloc(sd_model *m, int n)
{
    m->n = n;
    const size_t N = (size_t)(n > 0 ? n : 1);
    m->parent = malloc(N * sizeof(int));
    m->subtree_end = malloc(N * sizeof(int));
    m->last_child = malloc(N * sizeof(int));
    m->q_index = malloc(N * sizeof(int));
    m->v_index = malloc((N + 1) * sizeof(int));
    m->nq_k = malloc(N * sizeof(int));
    m->nv_k = malloc(N * sizeof(int));
    m->hinge = malloc(N * sizeof(sd_hinge_type));
    m->placement = malloc(N * sizeof(sd_transform));
    m->hinge_axes = malloc(N * 9 * sizeof(double));
    m->hinge_turn = malloc(N * 12 * sizeof(double));
    m->mass = malloc(N * sizeof(double));
    m->com = malloc(N * 3 * sizeof(double));
    m->inertia_com = malloc(N * 9 * sizeof(double));
    m->rigid = malloc(N * 13 * sizeof(double));
    m->desc = calloc(N, sizeof(sd_body_desc));
    return m->parent && m->subtree_end && m->last_child && m->q_index && m->v_index && m->nq_k && m->nv_k && m->hinge &&
           m->placement && m->hinge_axes && m->hinge_turn && m->mass && m->com && m->inertia_com && m->rigid && m->desc;
}

/* Move the bodies into the model in preorder, with their derived quantities. */
static sd_status fill_bodies(sd_builder *b, sd_model *m, const int *order, const int *parent_in, sd_error *err)
{
    const int n = b->nbodies;
    int *new_index = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!new_index) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    for (int k = 0; k < n; ++k) new_index[order[k]] = k;
    sd_status st = SD_OK;
    int nq = 0, nv = 0;
    for (int k = 0; k < n && st == SD_OK; ++k) {
        sd_body_desc *d = &b->bodies[order[k]];
        m->desc[k] = *d; /* the model takes over the strings */
        memset(d, 0, sizeof *d);
        d = &m->desc[k];
        m->parent[k] = parent_in[order[k]] < 0 ? -1 : new_index[parent_in[order[k]]];
        m->hinge[k] = d->hinge;
        m->placement[k] = d->placement;
        m->q_index[k] = nq;
        m->v_index[k] = nv;
        m->nq_k[k] = sd_hinge_type_nq(d->hinge);
        m->nv_k[k] = sd_hinge_type_nv(d->hinge);
        nq += m->nq_k[k];
        nv += m->nv_k[k];
        m->mass[k] = d->mass;
        memcpy(m->com + 3 * k, d->com, 3 * sizeof(double));
        memcpy(m->inertia_com + 9 * k, d->inertia, 9 * sizeof(double));
        sd_rigid_inertia_from_com(d->mass, d->com, d->inertia, m->rigid + 13 * k);
        m->total_mass += d->mass;
        if ((st = check_inertia(b, d, err)) == SD_OK) st = hinge_axes(d, m->hinge_axes + 9 * k, err);
        if (st == SD_OK) sd_hinge_turn_constants(m, k, m->hinge_turn + 12 * k);
    }
    free(new_index);
    m->nq = nq;
    m->nv = nv;
    m->v_index[n] = nv;
    return st;
}

static sd_status fill_speeds_and_subtrees(sd_model *m, sd_error *err)
{
    const size_t NV = (size_t)(m->nv > 0 ? m->nv : 1);
    m->v_body = malloc(NV * sizeof(int));
    m->v_parent = malloc(NV * sizeof(int));
    m->damping = malloc(NV * sizeof(double));
    /* zeroed: a flexible body's modal speeds have none (their elastic forces are the body's own) */
    m->armature = calloc(NV, sizeof(double));
    m->stiffness = calloc(NV, sizeof(double));
    m->spring_ref = calloc(NV, sizeof(double));
    if (!m->v_body || !m->v_parent || !m->damping || !m->armature || !m->stiffness || !m->spring_ref)
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    /* last[k]: the last speed on the path from the base to k inclusive (parent-first, so O(n)) */
    int *last = malloc((size_t)(m->n > 0 ? m->n : 1) * sizeof(int));
    if (!last) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    /* A flexible body's modal speeds follow its hinge's (mode_v_index[k] = v_index[k] + nv_k[k]) and
     * belong to it: they continue the chain, so its children's first speed follows its last mode. */
    for (int k = 0; k < m->n; ++k) {
        const int up = m->parent[k] < 0 ? -1 : last[m->parent[k]];
        const int nk = m->nv_k[k] + (m->n_modes ? m->n_modes[k] : 0);
        for (int i = 0; i < nk; ++i) m->v_parent[m->v_index[k] + i] = i ? m->v_index[k] + i - 1 : up;
        last[k] = nk ? m->v_index[k] + nk - 1 : up;
    }
    free(last);
    for (int k = 0; k < m->n; ++k) {
        for (int i = 0; i < m->nv_k[k]; ++i) {
            m->v_body[m->v_index[k] + i] = k;
            m->damping[m->v_index[k] + i] = m->desc[k].damping;
            m->armature[m->v_index[k] + i] = m->desc[k].armature;
            m->stiffness[m->v_index[k] + i] = m->desc[k].stiffness;
            m->spring_ref[m->v_index[k] + i] = m->hinge[k] == SD_HINGE_SPHERICAL ? 0.0 : m->desc[k].spring_ref;
            m->has_armature |= m->desc[k].armature > 0;
            m->has_passive |= m->desc[k].damping > 0 || m->desc[k].stiffness > 0;
            m->has_free_armature |= m->hinge[k] == SD_HINGE_FREE && m->desc[k].armature > 0;
        }
        m->has_passive |= m->has_free_armature; /* tau_passive carries its velocity term */
        /* modal damping is the body's D_m (flex_body.c), not a joint's */
        for (int r = 0; m->n_modes && r < m->n_modes[k]; ++r) {
            m->v_body[m->mode_v_index[k] + r] = k;
            m->damping[m->mode_v_index[k] + r] = 0.0;
        }
    }
    /* in preorder, k's subtree ends where the next body whose parent precedes k starts */
    for (int k = 0; k < m->n; ++k) m->last_child[k] = -1;
    for (int k = 0; k < m->n; ++k)
        if (m->parent[k] >= 0) m->last_child[m->parent[k]] = k; /* increasing k: the last one stays */
    for (int k = 0; k < m->n; ++k) m->subtree_end[k] = k + 1;
    for (int k = m->n - 1; k >= 0; --k)
        if (m->parent[k] >= 0 && m->subtree_end[k] > m->subtree_end[m->parent[k]])
            m->subtree_end[m->parent[k]] = m->subtree_end[k];
    return SD_OK;
}

static sd_status move_frames(sd_builder *b, sd_model *m, const sd_name_table *bodies, const int *order, sd_error *err)
{
    const int n = b->nbodies;
    int *new_index = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    const size_t F = (size_t)(b->nframes > 0 ? b->nframes : 1);
    m->frame_name = calloc(F, sizeof(char *));
    m->frame_body = malloc(F * sizeof(int));
    m->frame_placement = malloc(F * sizeof(sd_transform));
    if (!new_index || !m->frame_name || !m->frame_body || !m->frame_placement) {
        free(new_index);
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    }
    for (int k = 0; k < n; ++k) new_index[order[k]] = k;
    sd_name_table *names = sd_name_table_new(b->nframes); /* frames are unique among frames */
    sd_status st = names ? SD_OK : sd_error_set(err, SD_E_MEMORY, "out of memory");
    for (int i = 0; i < b->nframes && st == SD_OK; ++i) {
        const int body = sd_name_table_find(bodies, b->frame_body[i]);
        if (body < 0) {
            st = sd_error_set(err, SD_E_MODEL, "frame '%s': unknown body '%s'", b->frame_name[i], b->frame_body[i]);
            break;
        }
        if (sd_name_table_insert(names, b->frame_name[i], i) != -1) {
            st = sd_error_set(err, SD_E_MODEL, "frame '%s' is defined twice", b->frame_name[i]);
            break;
        }
        m->frame_name[i] = b->frame_name[i];
        b->frame_name[i] = NULL;
        m->frame_body[i] = new_index[body];
        m->frame_placement[i] = b->frame_placement[i];
        m->nframes = i + 1;
    }
    sd_name_table_free(names);
    free(new_index);
    return st;
}

sd_status sd_builder_build(sd_builder *b, sd_model **out, sd_error *err)
{
    if (!b || !out) return sd_error_set(err, SD_E_ARGUMENT, "sd_builder_build: NULL argument");
    *out = NULL;
    const int n = b->nbodies;
    sd_model *m = calloc(1, sizeof *m);
    int *parent_in = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    sd_name_table *bodies = sd_name_table_new(n);
    sd_status st = SD_OK;
    if (!m || !parent_in || !order || !bodies || !model_alloc(m, n)) {
        st = sd_error_set(err, SD_E_MEMORY, "out of memory");
        goto done;
    }
    m->name = dup_string(b->name ? b->name : "model");
    memcpy(m->gravity, b->gravity, sizeof m->gravity);
    m->time_step = b->time_step;
    if ((st = resolve_parents(b, bodies, parent_in, err)) != SD_OK) goto done;
    const int reached = preorder(n, parent_in, order);
    if (reached < 0) {
        st = sd_error_set(err, SD_E_MEMORY, "out of memory");
        goto done;
    }
    if (reached < n) {
        /* a body not reached from a root lies on (or hangs from) a cycle: name one on the cycle */
        char *seen = calloc((size_t)n, 1);
        if (!seen) {
            st = sd_error_set(err, SD_E_MEMORY, "out of memory");
            goto done;
        }
        int k = -1;
        for (int i = 0; i < reached; ++i) seen[order[i]] = 1;
        for (int i = 0; i < n && k < 0; ++i)
            if (!seen[i]) k = i;
        for (int steps = 0; steps < n; ++steps) k = parent_in[k]; /* walk n steps: now on the cycle */
        free(seen);
        st = sd_body_desc_fail(err, SD_E_MODEL, &b->bodies[k], "body '%s' is part of a cycle in the parent relation",
                       b->bodies[k].name);
        goto done;
    }
    if ((st = fill_bodies(b, m, order, parent_in, err)) != SD_OK) goto done;
    if ((st = sd_flex_model_build(b->flex, m, err)) != SD_OK) goto done; /* modes shift the layout */
    if ((st = fill_speeds_and_subtrees(m, err)) != SD_OK) goto done;
    if ((st = check_joint_names(m, err)) != SD_OK) goto done;
    if ((st = move_frames(b, m, bodies, order, err)) != SD_OK) goto done;
    if ((st = sd_loops_build(b->loops, m, err)) != SD_OK) goto done;
    m->warnings = b->warnings; /* the model takes the warnings over */
    m->nwarnings = b->nwarnings;
    b->warnings = NULL;
    b->nwarnings = b->cap_warnings = 0;
    /* bodies were moved into the model; the builder is empty and reusable */
    for (int i = 0; i < b->nframes; ++i) free(b->frame_body[i]), free(b->frame_name[i]);
    b->nbodies = b->nframes = 0;
    sd_flex_builder_free(b->flex);
    b->flex = NULL;
done:
    free(parent_in);
    free(order);
    sd_name_table_free(bodies);
    if (st != SD_OK) {
        sd_model_free(m);
        return st;
    }
    *out = m;
    return SD_OK;
}
