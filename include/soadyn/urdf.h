/*
 * soadyn/urdf.h — URDF models in.
 *
 * Links become bodies, joints hinges: revolute, continuous (one angle), prismatic, fixed, floating
 * (a free hinge) and planar. By default fixed joints are merged into their parent with exact lumping
 * of mass, centre of mass and inertia, and every merged link stays reachable as a named frame on the
 * body it was merged into. Warnings (mimic joints loaded as independent joints, broken triangle
 * inequalities, zero-mass leaf links) are kept on the model: sd_model_nwarnings() / sd_model_warning().
 * Errors name the file, the line and the element (for a body, the line of its <link>).
 *
 * The root: a root link named "world" is the inertial frame, not a body (a Drake-style file that
 * names "world" as a parent without defining it gets one); links welded to it stay fixed bodies.
 * Otherwise the root link is fixed to the inertial frame, or, with floating_base, attached by a
 * free hinge (on a "world" root, the free hinge goes on the links welded to it). That root hinge
 * is not in the file: it is named after the root link, or "<link>_root" when a joint of the file
 * already has the link's name (links and joints are separate namespaces in URDF).
 *
 * Names are kept whole, of any length. Every number is checked: finite, signed right and within
 * the bounds of physical models (an offset or a prismatic travel of at most 1e6 m, a mass of at
 * most 1e12 kg, an inertia of at most mass x (1e6 m)^2, ...); a value beyond them is refused with a
 * message giving the bound, so that every model that loads evaluates to finite numbers.
 *
 * The XML is read without network access and without loading external entities or DTDs; every
 * message of libxml2 comes back in the sd_error, never on stderr.
 */
#ifndef SOADYN_URDF_H
#define SOADYN_URDF_H

#include <stddef.h>

#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest model text read, 256 MiB (the full Talos humanoid's URDF is 110 kB): a larger file
 * or string is refused ("file too large"). Only regular files are read: a directory,
 * a FIFO or a device such as /dev/zero is refused at once. */
#define SD_MODEL_FILE_MAX_BYTES ((size_t)256 << 20)

typedef struct sd_urdf_options {
    int floating_base;     /* nonzero: attach the root link to the world with a free hinge */
    int keep_fixed_joints; /* nonzero: fixed joints become 0-dof bodies instead of being merged */
} sd_urdf_options;

/* Load a URDF file. options may be NULL (fixed root, fixed joints merged). On success *model is a
 * new model the caller frees with sd_model_free(). */
SD_API sd_status sd_urdf_load_file(const char *path, const sd_urdf_options *options, sd_model **model,
                                   sd_error *err);
/* Load a URDF from memory; `source_name` names it in messages (e.g. "<string>"). */
SD_API sd_status sd_urdf_load_string(const char *xml, size_t length, const char *source_name,
                                     const sd_urdf_options *options, sd_model **model, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_URDF_H */
