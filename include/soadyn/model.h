/*
 * soadyn/model.h — the model layer: an immutable description of a multibody tree (topology in
 * parent-first order, hinges, joint placements, inertias, gravity, names), made through a builder
 * and validated once.
 *
 * Ownership: sd_builder_new() and sd_builder_build() return objects the caller frees with
 * sd_builder_free() and sd_model_free(). Strings passed in are copied. Strings and arrays returned
 * by accessors belong to the model and live as long as it does. A built model is never changed by
 * the library, so one model may be shared by threads, each with its own sd_data.
 */
#ifndef SOADYN_MODEL_H
#define SOADYN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "spatial.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status of every call that can fail. */
typedef enum sd_status {
    SD_OK = 0,
    SD_E_ARGUMENT,      /* a NULL pointer, an index out of range, a size that does not match */
    SD_E_MODEL,         /* the model description is invalid (names the element) */
    SD_E_SINGULAR,      /* a singular articulated inertia D(k) or mass matrix (names the body) */
    SD_E_MEMORY,        /* allocation failed */
    SD_E_IO,            /* a file could not be read or written */
    SD_E_PARSE,         /* a model file is malformed (names file:line and the element) */
    SD_E_NOT_SUPPORTED, /* a feature the model asks for that soadyn does not offer */
    SD_E_SOLVER,        /* a time integrator failed (step size underflow, too much work) */
    SD_E_NOT_FINITE     /* a result came out inf or NaN from finite inputs (an overflow: the message
                           names the output, its index and the likely cause); no output is valid */
} sd_status;

/* The status and message of one failed call; the caller owns it (no global error state). */
typedef struct sd_error {
    sd_status status;
    char message[512];
} sd_error;

/* Short name of a status ("ok", "invalid argument", ...). */
SD_API const char *sd_status_name(sd_status status);

/* Hinge (joint) types. q are coordinates, u speeds; nq/nv per type:
 *   FIXED      0/0  welds the body to its parent
 *   REVOLUTE   1/1  angle about `axis`
 *   PRISMATIC  1/1  displacement along `axis`
 *   SPHERICAL  4/3  q = unit quaternion (w,x,y,z) of the body in the joint frame; u = angular
 *                   velocity in the body frame
 *   FREE       7/6  q = (position of the body origin in the joint frame, unit quaternion (w,x,y,z));
 *                   u = (angular velocity, linear velocity of the body origin), both in the body frame
 *   UNIVERSAL  2/2  angle about `axis`, then angle about `axis2` (axis2 in the frame after the first
 *                   rotation); u = the two angle rates
 *   PLANAR     3/3  q = (s1, s2, theta): translation along two unit directions t1, t2 perpendicular to
 *                   the normal `axis` (t1, t2, axis right-handed), then rotation theta about the
 *                   normal; u = dq/dt                                                               */
typedef enum sd_hinge_type {
    SD_HINGE_FIXED = 0,
    SD_HINGE_REVOLUTE,
    SD_HINGE_PRISMATIC,
    SD_HINGE_SPHERICAL,
    SD_HINGE_FREE,
    SD_HINGE_UNIVERSAL,
    SD_HINGE_PLANAR,
    SD_HINGE_TYPE_COUNT
} sd_hinge_type;

/* Name of a hinge type ("revolute", ...); "unknown" for a value out of range. */
SD_API const char *sd_hinge_type_name(sd_hinge_type type);
/* Number of coordinates (nq) and speeds (nv) of a hinge type; -1 for a value out of range. */
SD_API int sd_hinge_type_nq(sd_hinge_type type);
SD_API int sd_hinge_type_nv(sd_hinge_type type);

/* ---------------------------------------------------------------- builder */

/* One body and the hinge that connects it to its parent. Initialise with sd_body_desc_init(). */
typedef struct sd_body_desc {
    const char *name;       /* unique body name (required) */
    const char *parent;     /* parent body name; NULL or "" for the inertial frame */
    const char *joint_name; /* name of the hinge; NULL for the body name */
    sd_hinge_type hinge;
    sd_transform placement; /* the joint frame in the parent body frame; at the neutral
                               configuration the body frame coincides with the joint frame */
    double axis[3];         /* revolute/prismatic axis, universal first axis, planar normal
                               (joint frame; normalised by the builder) */
    double axis2[3];        /* universal second axis (normalised by the builder) */
    double mass;            /* kg, >= 0 */
    double com[3];          /* centre of mass in the body frame, m */
    double inertia[9];      /* rotational inertia about the centre of mass, body axes, kg m^2,
                               symmetric positive semi-definite */
    /* Joint-level dynamics (soadyn/dynamics.h, "Joint-level dynamics"), each acting on every one of
     * the hinge's speeds: */
    double armature;        /* rotor (reflected) inertia added to the diagonal of M at each of the
                               hinge's speeds (kg m^2 or kg), >= 0; a motor's is rotor inertia times
                               gear ratio squared */
    double damping;         /* viscous joint damping (N m s/rad or N s/m), >= 0: tau = -damping u */
    double stiffness;       /* linear joint spring (N m/rad or N/m), >= 0: tau = -stiffness (q - spring_ref)
                               on a revolute or prismatic hinge; spherical: -stiffness times the
                               rotation vector of the body in the joint frame (a spring toward the
                               neutral orientation, spring_ref must be 0); refused (SD_E_NOT_SUPPORTED)
                               on free, universal and planar hinges */
    double spring_ref;      /* the spring's rest coordinate (rad or m) */
    double friction;        /* Coulomb friction magnitude, kept for the caller */
    int has_limits;         /* nonzero: lower/upper are position limits */
    double lower, upper;    /* position limits (rad or m) */
    double effort_limit;    /* 0: none */
    double velocity_limit;  /* 0: none */
    const char *mimic_joint;                /* NULL: not a mimic joint */
    double mimic_multiplier, mimic_offset;  /* q = multiplier * q(mimic_joint) + offset */
    const char *source_file; /* where the body was described, for messages; may be NULL */
    int source_line;         /* 0: unknown */
    int parent_node;         /* -1 (default): the hinge sits on the parent's body frame; t >= 0: on node t
                                of a flexible parent (soadyn/flex.h), the placement still given in the
                                parent's body frame */
    int has_reference;       /* nonzero: `reference` holds the hinge's coordinates at the model's
                                reference configuration (sd_configuration_reference); 0 (default): the
                                neutral ones */
    double reference[7];     /* the hinge's nq coordinates there (a quaternion's norm within 1e-6 of 1;
                                the builder normalises it), bounded like the limits; entries past nq
                                unused */
} sd_body_desc;

/* Fill a description with defaults: no name, root parent, fixed hinge, identity placement,
 * axis = z, axis2 = y, zero mass and inertia, no limits, no mimic, parent_node -1. */
SD_API void sd_body_desc_init(sd_body_desc *desc);

typedef struct sd_builder sd_builder;
typedef struct sd_model sd_model;

/* A new empty builder (gravity 0, 0, -9.81); NULL when out of memory. */
SD_API sd_builder *sd_builder_new(void);
SD_API void sd_builder_free(sd_builder *builder);

/* Set the model's name (copied). */
SD_API sd_status sd_builder_set_name(sd_builder *builder, const char *name);
/* Set gravity, the acceleration of free fall in the inertial frame (m/s^2); SD_E_ARGUMENT, and
 * gravity unchanged, unless it is finite and of magnitude at most 1e7 m/s^2. */
SD_API sd_status sd_builder_set_gravity(sd_builder *builder, const double gravity[3]);
/* Keep the time step the model file gives for simulating it (MJCF's <option timestep>), s;
 * SD_E_ARGUMENT, and nothing kept, unless it is finite, > 0 and at most 1e3 s. */
SD_API sd_status sd_builder_set_time_step(sd_builder *builder, double dt);
/* Add a body. Bodies may be added in any order; sd_builder_build() sorts them parent-first.
 * Checks done here: name present, hinge type known, numbers finite, signed right and within the
 * bounds of physical models (offsets and centres of mass 1e6 m, mass 1e12 kg, ...; the message
 * gives the bound), lower <= upper when has_limits. */
SD_API sd_status sd_builder_add_body(sd_builder *builder, const sd_body_desc *desc, sd_error *err);
/* Add a named frame rigidly attached to a body (e.g. a link merged by a fixed joint, a tool tip). */
SD_API sd_status sd_builder_add_frame(sd_builder *builder, const char *name, const char *body,
                                      const sd_transform *placement, sd_error *err);
/* Add a warning to be kept on the model (loaders use it for data they accept but doubt). */
SD_API sd_status sd_builder_add_warning(sd_builder *builder, const char *message);
/* Validate and build. On success *model is a new model the caller frees with sd_model_free();
 * the builder may be freed or reused. Errors name the body: duplicate or unknown names, cycles,
 * negative mass, non-symmetric or indefinite inertia, a hinge axis of zero length. An inertia that
 * breaks the triangle inequality is accepted with a warning. */
SD_API sd_status sd_builder_build(sd_builder *builder, sd_model **model, sd_error *err);

/* ---------------------------------------------------------------- model queries */

/* A query given a NULL model or an index out of range answers what no valid one can: NULL, -1,
 * NaN (masses), SD_HINGE_TYPE_COUNT (hinge type), 0 (sizes of a NULL model). */

SD_API void sd_model_free(sd_model *model);

SD_API const char *sd_model_name(const sd_model *model);
SD_API int sd_model_nbodies(const sd_model *model); /* bodies, numbered parent-first 0..n-1 */
SD_API int sd_model_nq(const sd_model *model);
SD_API int sd_model_nv(const sd_model *model);
SD_API void sd_model_gravity(const sd_model *model, double gravity[3]);
/* The time step the model file gives (sd_builder_set_time_step), s; 0 when it gives none. */
SD_API double sd_model_time_step(const sd_model *model);
SD_API double sd_model_total_mass(const sd_model *model);

SD_API int sd_model_body_index(const sd_model *model, const char *body_name);   /* -1 if none */
SD_API int sd_model_joint_index(const sd_model *model, const char *joint_name); /* body index, -1 if none */
SD_API const char *sd_model_body_name(const sd_model *model, int body);
SD_API const char *sd_model_joint_name(const sd_model *model, int body);
SD_API int sd_model_parent(const sd_model *model, int body); /* -1: the inertial frame */
SD_API sd_hinge_type sd_model_hinge(const sd_model *model, int body);
SD_API int sd_model_q_index(const sd_model *model, int body); /* first coordinate of the body's hinge */
SD_API int sd_model_v_index(const sd_model *model, int body); /* first speed of the body's hinge */
SD_API int sd_model_hinge_nq(const sd_model *model, int body);
SD_API int sd_model_hinge_nv(const sd_model *model, int body);
SD_API const sd_transform *sd_model_placement(const sd_model *model, int body);
SD_API const double *sd_model_axis(const sd_model *model, int body);
SD_API double sd_model_body_mass(const sd_model *model, int body);
SD_API const double *sd_model_body_com(const sd_model *model, int body);
SD_API const double *sd_model_body_inertia(const sd_model *model, int body); /* about the COM, 3x3 */
/* The description the body was built from (limits, damping, mimic, source); strings owned by
 * the model. */
SD_API const sd_body_desc *sd_model_body_desc(const sd_model *model, int body);
/* Joint-level dynamics per speed v (0 <= v < nv; NaN out of range): the armature added to M(v, v),
 * the damping and the stiffness of the hinge owning v (0 on a flexible body's modal speeds), and
 * the spring's rest coordinate (revolute/prismatic: the coordinate of v; spherical: 0). */
SD_API double sd_model_armature(const sd_model *model, int v);
SD_API double sd_model_damping(const sd_model *model, int v);
SD_API double sd_model_stiffness(const sd_model *model, int v);
SD_API double sd_model_spring_ref(const sd_model *model, int v);
/* The body whose hinge owns speed index v (0 <= v < nv); -1 if out of range. */
SD_API int sd_model_v_body(const sd_model *model, int v);

SD_API int sd_model_nframes(const sd_model *model);
SD_API int sd_model_frame_index(const sd_model *model, const char *frame_name); /* -1 if none */
SD_API const char *sd_model_frame_name(const sd_model *model, int frame);
SD_API int sd_model_frame_body(const sd_model *model, int frame);
SD_API const sd_transform *sd_model_frame_placement(const sd_model *model, int frame);

SD_API size_t sd_model_nwarnings(const sd_model *model);
SD_API const char *sd_model_warning(const sd_model *model, size_t i);

/* 1 if body a is b or an ancestor of b (mass matrix entries of a and b may be nonzero only
 * when one is an ancestor of the other: 004 Sec 4.2, Sec 7). */
SD_API int sd_model_is_ancestor(const sd_model *model, int a, int b);

/* ---------------------------------------------------------------- configurations */

/* q = the neutral configuration (zero angles and displacements, identity quaternions). */
SD_API void sd_configuration_neutral(const sd_model *model, double *q);
/* q = the model's reference configuration: the pose its file describes, where the model starts
 * unless told otherwise (the command's default q). Each hinge's sd_body_desc.reference where
 * has_reference is set, the neutral coordinates elsewhere (modal coordinates 0). An MJCF model's is
 * MuJoCo's qpos0 (a hinge's or slide's ref, a free joint's written world pose), which closes its
 * loops where the neutral one need not; a URDF or SDF model's is the neutral configuration. */
SD_API void sd_configuration_reference(const sd_model *model, double *q);
/* q_out = q (+) u dt: moves q along the constant speed u for dt on the configuration manifold
 * (quaternions by the exponential map, so they stay unit). q_out may alias q. */
SD_API void sd_configuration_integrate(const sd_model *model, const double *q, const double *u, double dt,
                                       double *q_out);
/* u = q1 (-) q0, the constant speed that takes q0 to q1 in unit time (the inverse of the above). */
SD_API void sd_configuration_difference(const sd_model *model, const double *q0, const double *q1, double *u);
/* The local chart integrators work in: around any base q0, q = q0 (+) delta (delta has nv
 * entries, sd_configuration_integrate with dt = 1). When the body speeds are u at that q, the chart
 * coordinates move at delta_dot = J^-1(delta) u: u itself for plain coordinates, the inverse right
 * Jacobian of SO(3) applied to the angular velocity for quaternions, exp(phi) v for a free
 * hinge's position. A Runge-Kutta method applied to delta keeps its order on the manifold. */
SD_API void sd_configuration_chart_rate(const sd_model *model, const double *delta, const double *u, double *delta_dot);
/* The largest rotation angle (rad) held in chart coordinates delta; the chart is regular below 2 pi,
 * so integrators re-base well before. */
SD_API double sd_configuration_chart_angle(const sd_model *model, const double *delta);
/* The largest | |quat| - 1 | of the quaternions in q (0 if none). */
SD_API double sd_configuration_quaternion_error(const sd_model *model, const double *q);
/* Rescale every quaternion in q to unit length; returns the largest |1 - |quat|| it found. */
SD_API double sd_configuration_normalize(const sd_model *model, double *q);
/* A random configuration: angles uniform in the joint limits where given (lower < upper), else in [-pi, pi];
 * displacements in limits or [-1, 1]; uniformly random quaternions. *rng is a nonzero seed
 * that the call advances (xorshift64*), so runs are reproducible. */
SD_API void sd_configuration_random(const sd_model *model, uint64_t *rng, double *q);
/* A uniform random number in [0, 1) from the same generator. */
SD_API double sd_random_uniform(uint64_t *rng);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_MODEL_H */
