/*
 * soadyn/sdf.h — SDF (SDFormat) models in, read by Debian's libsdformat 12, which resolves SDF's
 * pose frames (relative_to, nested models, <frame>s) the way Gazebo does.
 *
 * One <model> is loaded: the first of the file (or the one of the <world>'s models named by
 * options->model_name). Links become bodies and joints hinges, every pose resolved by
 * libsdformat into the model frame:
 *   revolute, continuous   REVOLUTE about <axis><xyz> (in the frame <xyz expressed_in> names)
 *   prismatic              PRISMATIC along <axis><xyz>
 *   ball                   SPHERICAL
 *   universal              UNIVERSAL about <axis>, then <axis2>
 *   fixed                  merged into the parent with exact lumping of mass, centre of mass and
 *                          inertia (the merged link stays a named frame), or a 0-dof body with
 *                          options->keep_fixed_joints - as the URDF reader does
 * Other joint types (screw, gearbox, revolute2) are refused naming the joint. A body's frame is
 * its hinge frame at the neutral configuration: the frame of the joint that enters the link (SDF
 * places it relative to the child link, at the link's origin unless the joint has a <pose>), the
 * link frame for a root. A link's <inertial> (mass, inertia about the inertial frame, its <pose>)
 * is turned into that body frame. <dynamics> damping, friction, spring_stiffness and
 * spring_reference and <limit> are read into the body's description (a ball joint's damping and
 * friction from its <axis><dynamics>, as Drake reads them; a spring on a ball joint is refused,
 * SDF giving it no rest orientation; limits at libsdformat's
 * default of +-1e16 mean none); Drake's <drake:rotor_inertia> and <drake:gear_ratio> under a
 * <joint> give its armature, rotor_inertia x gear_ratio^2 (as the URDF reader reads them from a
 * <transmission>). A loop joint has no hinge: its <dynamics> are not modelled. Each <frame> (and
 * each link merged by a fixed joint) becomes a frame of the model (sd_model_frame_index), on the
 * body its link belongs to; with keep_fixed_joints a <frame> is a massless 0-dof body instead.
 *
 * The root: a joint whose parent is "world" attaches its child to the inertial frame; a model with
 * no joint to "world" floats: its canonical link (or else the one link no joint enters) gets a free
 * hinge named "<link>_root" whose neutral configuration is the link's pose in the file, unless
 * options->fixed_base or <static> welds it there. Loops: the spanning tree is grown breadth-first from the root;
 * every joint whose child already has a parent becomes a closure constraint (loops.h) of the
 * matching kind, named after the joint, between the joint frame on the parent link and on the
 * child link: revolute/continuous -> REVOLUTE about the axis, prismatic -> PRISMATIC, ball -> BALL,
 * fixed -> WELD; a universal loop joint is refused. Links not connected to the root are refused.
 *
 * Errors name the file and, where known, the line: libsdformat's own errors (frame-graph errors
 * such as a cycle of relative_to, a missing <include> uri, an unknown joint type) come back in the
 * sd_error, the first one in full and how many more there were, at the line of the element it
 * names; malformed XML is located by libxml2. Every number is checked (finite, mass >= 0 and at
 * most 1e12 kg, inertia positive semi-definite, offsets within 1e6 m, damping >= 0) before the
 * model is built. Nothing is printed: libsdformat's console and urdfdom's (console_bridge) are
 * captured during a load, so loads are serialised by a lock inside the library.
 *
 * Built only when soadyn was configured with SOADYN_WITH_SDF=ON (needs libsdformat-dev); otherwise
 * these functions return SD_E_NOT_SUPPORTED saying so. <soadyn/config.h>: SOADYN_HAS_SDF.
 */
#ifndef SOADYN_SDF_H
#define SOADYN_SDF_H

#include <stddef.h>

#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loader options; zero-initialise. */
typedef struct sd_sdf_options {
    int keep_fixed_joints; /* nonzero: fixed joints become 0-dof bodies instead of being merged */
    int fixed_base;        /* nonzero: a model with no joint to "world" is welded to the world at
                              its pose instead of floating on a free hinge */
    const char *model_name; /* NULL: the first model; else the model of this name (for a <world>
                               holding several) */
} sd_sdf_options;

/* Load an SDF file. options may be NULL (defaults above). On success *model is a new model the
 * caller frees with sd_model_free(). <include> uris are resolved by libsdformat relative to the
 * file and SDF_PATH. */
SD_API sd_status sd_sdf_load_file(const char *path, const sd_sdf_options *options, sd_model **model,
                                  sd_error *err);
/* Load SDF text from memory (length bytes, need not be NUL-terminated); `source_name` names it in
 * messages (e.g. "<string>"). */
SD_API sd_status sd_sdf_load_string(const char *text, size_t length, const char *source_name,
                                    const sd_sdf_options *options, sd_model **model, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_SDF_H */
