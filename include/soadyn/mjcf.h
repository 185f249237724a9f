/*
 * soadyn/mjcf.h — MuJoCo MJCF models in, with MuJoCo 2.2.2's compiler semantics.
 *
 * Bodies and joints: every <body> becomes a body; its joints (hinge -> REVOLUTE, slide ->
 * PRISMATIC, ball -> SPHERICAL, free and <freejoint> -> FREE) act in the order written, so a body
 * with k joints becomes a chain of k bodies: the first k - 1 massless, named "<body>/<joint>",
 * the last named after the body and carrying its mass. An unnamed joint is named
 * "<body>/joint<i>", i its number in the model (MuJoCo's joint id, from 0), with "_2", "_3", ...
 * appended if a joint of the file has that name (its massless link has the same name). A body without joints is welded (FIXED) to
 * its parent. Unnamed bodies are named "body<i>" (i: MuJoCo's body number, the world 0).
 * Coordinates are MuJoCo's qpos: a hinge's angle and a slide's displacement as MuJoCo counts
 * them (the body is at its written pose when q = ref, so a joint's ref is folded into the
 * placement), a ball's quaternion, a free joint's world position and quaternion (its placement is
 * the world frame). The model's reference configuration (sd_configuration_reference) is MuJoCo's
 * qpos0: each ref, identity ball quaternions, each free body's written pose. Speeds are MuJoCo's qvel except for free joints, where soadyn's are (angular,
 * linear velocity) both in the body frame and MuJoCo's (linear velocity in the world frame,
 * angular in the body frame).
 *
 * Compiler: angle (degree by default: euler, axisangle and hinge range/ref/springref), eulerseq,
 * inertiafromgeom (auto: geoms give the inertia of a body without <inertial>; true: always;
 * false: never), inertiagrouprange, boundmass, boundinertia (on the principal moments),
 * settotalmass (masses and inertias scaled after the bounds), autolimits. coordinate="global" is
 * refused. <default> classes with inheritance; class= and childclass=, a class that does not exist
 * is an error naming it. Orientations: quat, axisangle, euler, xyaxes, zaxis (at most one).
 * Inertia from geoms: sphere, capsule, cylinder (also by fromto), box, ellipsoid (also by
 * fromto: size[0] is then both transverse half-sizes, as MuJoCo 2.2.2 compiles it), with density
 * (default 1000) or mass, at their pos/quat; as in MuJoCo 2.2.2 every geom
 * whose group is within inertiagrouprange counts, visual ones included. A mesh, plane or height
 * field geom that would count is an error naming it (meshes are not read); when <inertial> gives
 * the inertia, geoms are not loaded at all. <option gravity> sets gravity. <include file> is
 * expanded, the file relative to the main file's directory (also for an include inside an
 * included file: MuJoCo 2.2.2's rule).
 *
 * Joint-level dynamics: armature, damping, stiffness with springref (frictionloss is kept in
 * sd_body_desc.friction). Equalities become closure constraints (loops.h), named after the
 * equality ("equality<i>" when unnamed):
 *   connect body1 body2 anchor    BALL: the anchor (body1's frame) and the point of body2 that
 *                                 coincides with it at the reference configuration
 *   weld body1 body2 relpose      WELD, as MuJoCo 2.2.2: the point relpose.pos of body1 meets
 *        anchor                   the point anchor of body2, body2's axes at relpose.quat in
 *                                 body1's (the reference configuration's relative pose when
 *                                 relpose's quaternion is zero, the default)
 *   joint joint1 joint2 polycoef  COUPLING q1 = ref1 + c0 + c1 (q2 - ref2); a polynomial of
 *                                 higher degree, a joint fixed in place (no joint2, or c1 = 0)
 *                                 are refused naming the equality
 * A loop that the reference configuration does not close and assembly cannot close is an error
 * naming it. Inactive equalities (active="false") are left out with a warning.
 *
 * <option><flag gravity="disable"> switches gravity off and <flag passive="disable"> the joints'
 * springs and dampers (the armature stays), as in MuJoCo. A weld's torquescale 0 leaves the
 * rotation free in MuJoCo 2.2.2 (it scales the rotation rows' Jacobian): soadyn makes it a BALL.
 *
 * A named <site> of a body is a model frame of that name (sd_model_frame_index) at the site's pos
 * and orientation (through the site classes).
 *
 * What soadyn does not model (contacts, tendons, actuators, joint limits, frictionloss, sites
 * without a name, on the world or placed by fromto, sensors, ...) is counted in one warning on the
 * model; the attributes of the elements it reads that change MuJoCo's motion but not soadyn's
 * (fluid forces: option density, viscosity, wind, geom fluidshape; the soft constraints' solref,
 * solimp and a weld's torquescale other than 0 or 1; flag equality/constraint "disable"; joint
 * springdamper; compiler balanceinertia, discardvisual) are counted in a second one. Errors name
 * the file, the line and the
 * element: "cassie.xml:123: joint 'x': unknown type 'screw'".
 */
#ifndef SOADYN_MJCF_H
#define SOADYN_MJCF_H

#include <stddef.h>

#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* <include file> expansion is bounded, since a few small files that each include the next several
 * times would expand exponentially: one load expands at most SD_MJCF_MAX_INCLUDES <include>
 * elements (a file included n times counts n times), and the main text and every included text
 * together are at most SD_MJCF_MAX_EXPANDED_BYTES, as large as one model file may be. Past either
 * bound the load fails, naming the <include> reached (file:line) and the chain of files that led to
 * it. Includes also nest at most 16 deep. */
#define SD_MJCF_MAX_INCLUDES 1000
#define SD_MJCF_MAX_EXPANDED_BYTES ((size_t)256 << 20)

/* Load an MJCF file (at most SD_MODEL_FILE_MAX_BYTES, regular files only). On success *model is a
 * new model the caller frees with sd_model_free(). */
SD_API sd_status sd_mjcf_load_file(const char *path, sd_model **model, sd_error *err);
/* Load MJCF from memory; `source_name` names it in messages and its directory is where <include>
 * files are looked for (the current directory when it has none). */
SD_API sd_status sd_mjcf_load_string(const char *xml, size_t length, const char *source_name, sd_model **model,
                                     sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_MJCF_H */
