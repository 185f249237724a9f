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
 * Closed loops (loops.h): the loader adds closure constraints for
 *   - <mimic joint="J" multiplier="r" offset="c"/> in a revolute, continuous or prismatic joint: a
 *     COUPLING q = r q(J) + c named after the mimic joint (or "<joint>_mimic" when a URDF+ element
 *     already has that name), its source the line of <mimic>. J must be another revolute, continuous
 *     or prismatic joint of the file (not a fixed, merged, floating or planar one), r nonzero.
 *     options->mimic_independent loads them as independent joints instead, with a warning. A <mimic>
 *     in a fixed joint is ignored with a warning.
 *   - URDF+ (Chignoli, Slotine, Wensing, Kim 2024, arXiv 2411.19753; the elements as its authors'
 *     parser reads them) under <robot>:
 *       <loop name="L" type="revolute|continuous|prismatic|fixed|spherical|ball|planar|point_in_plane">
 *         <predecessor link="A"> <origin xyz=".." rpy=".."/> </predecessor>
 *         <successor link="B"> <origin xyz=".." rpy=".."/> </successor>
 *         <axis xyz="0 0 1"/>
 *       </loop>
 *     a constraint named L of kind REVOLUTE, PRISMATIC, WELD, BALL or PLANAR between F_A, the loop joint's
 *     frame on A (its <origin>: the frame in A's link frame), and F_B on B; both frames coincide,
 *     up to the loop joint's own motion, when the loop is closed. <axis> (default 1 0 0, as for a
 *     URDF joint, normalised; zero is refused for revolute, prismatic, planar and point_in_plane;
 *     for the last two it is the plane's normal) is in F_A's axes. <parent>
 *     and <child> are read as <predecessor> and <successor>; an <origin> directly in <loop> is F_A
 *     when <predecessor> has none; an absent origin is the identity. A or B may be "world" (the
 *     inertial frame) or a link merged by a fixed joint (a frame of the body it was merged into).
 *     A planar loop joint keeps B in F_A's plane (turning about the normal, sliding in the plane: 3
 *     rows); soadyn's extension type="point_in_plane" keeps only F_B's origin in that plane (1 row).
 *     "floating" loop joints are refused (they would constrain nothing).
 *       <coupling name="C" ratio="r" offset="c">
 *         <predecessor joint="a"/> <successor joint="b"/>
 *       </coupling>
 *     a COUPLING q(b) = r q(a) + c named C: as in URDF+, the ratio is the successor's speed over
 *     the predecessor's. Each side names a joint (joint="...") or, as URDF+ writes it, a link
 *     (link="...": the joint that moves that link); the ratio may also be given as a child
 *     <ratio value="r"/> (URDF+'s form) and the offset as <offset value="c"/>; r defaults to 1 and
 *     must be nonzero, c defaults to 0. Both joints must be revolute, continuous or prismatic.
 *   soadyn's extension: <loop ... embed="true">, <coupling ... embed="true"> and
 *     <mimic ... embed="true"/> set the constraint's embed flag (sd_constraint_desc.embed): the model's
 *     choice to embed it (soadyn/embed.h: its bodies become one aggregate node, its multipliers are
 *     not integrated) instead of tree augmentation; "false" (the default), "1" and "0" are read too,
 *     any other value is an error naming file:line. sd_embed_options.loops overrides it. MJCF and SDF
 *     have no such attribute: their loops are embedded through the API or `soadyn ... --embed`.
 *   Constraint names are unique among the <loop> and <coupling> elements (a namespace of their own).
 *   Rows are stacked loops first, then couplings, then mimics, each in document order. Errors (an
 *   unknown link or joint, a missing element, an unknown or floating type, a zero axis or normal, a zero ratio, a
 *   joint without one coordinate, a name used twice) name the file and the element's line.
 *
 * Flexible links (flex.h; README "Flexible bodies"): soadyn's extension elements, the "soadyn:"
 * prefix matched literally (declared with xmlns:soadyn or not):
 *   <link name="A"> <soadyn:flexible file="A.json"/> </link>       a data file (sd_flex_data_read_file),
 *                                                                   relative to the URDF file's folder
 *   <link name="A"> <soadyn:flexible> <beam length=".." EI=".." mass_per_length=".." elements="10"
 *       modes="4" boundary="cantilever|free-free" planes="both|xy|xz" damping_ratio="0"/>
 *     </soadyn:flexible> </link>                                    the uniform beam (sd_beam_modes)
 *   <joint ...> <parent link="A"/> ... <soadyn:node index="t"/> </joint>   the joint rides on node t
 * <soadyn:flexible mass_model="full|linearised"> overrides the model's mass model. The link's own
 * <inertial> is the body's rigid part. A flexible link, and a link whose joint rides on a node,
 * stays a body even behind a fixed joint. Errors (the data file's, with its member; a node index
 * beyond the model's nodes; a node on a rigid link; a misspelt attribute) carry file:line.
 *
 * Joint springs: soadyn's extension <soadyn:spring stiffness="K" reference="R"/> in a revolute,
 * continuous or prismatic <joint> gives it the linear spring tau = -K (q - R) (sd_body_desc.stiffness,
 * spring_ref: N m/rad and rad, or N/m and m; R defaults to 0). URDF has none of its own. Errors (a
 * negative or unbounded K, another joint type, a misspelt attribute) carry file:line.
 *
 * Gravity: URDF has none, so the model's is 0 0 -9.81 m/s^2 (z up), unless soadyn's extension
 * <soadyn:gravity xyz="GX GY GZ"/> under <robot> gives it (e.g. 0 0 0 for a spacecraft; once;
 * finite, of magnitude at most 1e7 m/s^2, else an error at its line).
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

/* The data files of a URDF's <soadyn:flexible file="..."> elements together, each counted every
 * time a link refers to it: at most 256 MiB for one load, as much as one model file, so that many
 * links naming one large file cannot make a small URDF read without end. Past it the load fails
 * naming the element that reached it. */
#define SD_URDF_MAX_FLEX_FILE_BYTES ((size_t)256 << 20)

/* Loader options; zero-initialise (designated initialisers keep code right when fields are added). */
typedef struct sd_urdf_options {
    int floating_base;     /* nonzero: attach the root link to the world with a free hinge */
    int keep_fixed_joints; /* nonzero: fixed joints become 0-dof bodies instead of being merged */
    int mimic_independent; /* nonzero: <mimic> joints are independent joints (a warning lists them)
                              instead of coupling constraints */
} sd_urdf_options;

/* Load a URDF file. options may be NULL (fixed root, fixed joints merged, mimic joints coupled). On
 * success *model is a new model the caller frees with sd_model_free(). */
SD_API sd_status sd_urdf_load_file(const char *path, const sd_urdf_options *options, sd_model **model,
                                   sd_error *err);
/* Load a URDF from memory; `source_name` names it in messages (e.g. "<string>"). */
SD_API sd_status sd_urdf_load_string(const char *xml, size_t length, const char *source_name,
                                     const sd_urdf_options *options, sd_model **model, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_URDF_H */
