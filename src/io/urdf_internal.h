/*
 * io/urdf_internal.h — what the parts of the URDF loader share: the robot as read from the file
 * (links, joints, URDF+ loops and couplings, still in URDF terms, each with its source line).
 *
 *   urdf.c        XML -> sd_urdf_robot (every number checked, every element's line kept)
 *   urdf_build.c  sd_urdf_robot -> sd_builder (tree checks, fixed-joint lumping, warnings)
 *   urdf_loops.c  the closure constraints: URDF+ <loop> and <coupling>, and <mimic> as couplings
 *
 * The XML itself is read by io/xml_read.c, the file by io/io_common.c. Private to the library;
 * not installed.
 */
#ifndef SOADYN_IO_URDF_INTERNAL_H
#define SOADYN_IO_URDF_INTERNAL_H

#include <soadyn/loops.h>
#include <soadyn/model.h>
#include <soadyn/urdf.h>

#include "io/io_common.h"

/* A <link>. The inertia is already rotated from the <inertial> frame into the link axes. */
typedef struct sd_urdf_link {
    char *name;
    int line;            /* line of the <link> element */
    int has_inertial;
    double mass;         /* kg; 0 without <inertial> */
    double com[3];       /* centre of mass in the link frame */
    double inertia[9];   /* about the centre of mass, link axes */
    int triangle_broken; /* principal moments break the triangle inequality (a warning) */
    int parent_joint;    /* joint whose child this link is; -1 for a root */
    int first_child;     /* first joint whose parent this link is (document order); -1 if none */
    int last_child;
    struct sd_urdf_flex *flex; /* <soadyn:flexible> (urdf_flex.c); NULL: a rigid link */
} sd_urdf_link;

/* A <joint>. Link references are resolved to indices by the builder half. */
typedef struct sd_urdf_joint {
    char *name;
    int line;                /* line of the <joint> element */
    sd_hinge_type hinge;     /* continuous joints are REVOLUTE without position limits */
    int continuous;
    char *parent_name, *child_name;
    int parent, child;       /* link indices, -1 until resolved */
    int next_sibling;        /* next joint with the same parent link; -1 if none */
    sd_transform origin;     /* joint frame (= child link frame at q = 0) in the parent link frame */
    double axis[3];          /* unit axis in the joint frame (planar: the plane normal) */
    double axis2[3];         /* universal (SDF reader): the unit second axis in the joint frame */
    int has_limits;
    double lower, upper, effort, velocity;
    const char *unbounded_limit; /* the first <limit> attribute beyond the physical bounds, read as
                                    "no limit" (a warning); NULL if none */
    int limit_line;
    double damping, friction;
    double armature;         /* reflected rotor inertia of the transmissions driving the joint:
                                drake:rotor_inertia x drake:gear_ratio^2, summed (urdf.c) */
    double stiffness, spring_ref; /* joint spring (SDF reader: <dynamics><spring_stiffness>, <spring_reference>) */
    char *mimic;             /* joint this one mimics; NULL if none */
    int mimic_line;
    double mimic_multiplier, mimic_offset;
    int mimic_embed;         /* <mimic embed="true">: the coupling embedded (soadyn/embed.h), else 0 */
    int has_node, parent_node; /* <soadyn:node index>: the joint rides on the parent's node parent_node */
    int node_line;
} sd_urdf_joint;

/* The two sides of a URDF+ element: [0] the predecessor (or <parent>), [1] the successor (<child>). */
enum { SD_URDF_PREDECESSOR = 0, SD_URDF_SUCCESSOR = 1 };

/* A URDF+ <loop>: a loop joint between a frame on the predecessor link and one on the successor. */
typedef struct sd_urdf_loop {
    char *name;
    int line;                /* line of the <loop> element */
    sd_constraint_type type; /* REVOLUTE (revolute, continuous), PRISMATIC, BALL (spherical, ball),
                                WELD (fixed) */
    char *link[2];           /* predecessor, successor */
    int side_line[2];        /* lines of the <predecessor> and <successor> elements */
    sd_transform origin[2];  /* the loop joint's frame in each link's frame */
    double axis[3];          /* unit; in the predecessor's loop joint frame (origin[0]) */
    int embed;               /* embed="true": the loop embedded (soadyn/embed.h); 0 tree-augmented */
} sd_urdf_loop;

/* A URDF+ <coupling>: q(successor) = ratio q(predecessor) + offset, each side a joint named
 * directly (joint="...") or through the link it moves (link="...": the link's parent joint). */
typedef struct sd_urdf_coupling {
    char *name;
    int line;                /* line of the <coupling> element */
    char *link[2], *joint[2];/* per side, exactly one of them */
    int side_line[2];
    double ratio, offset;
    int embed;               /* embed="true": embedded (soadyn/embed.h); 0 tree-augmented */
} sd_urdf_coupling;

/* The whole file. */
typedef struct sd_urdf_robot {
    const char *source;      /* file name used in messages (not owned) */
    char *name;              /* robot name; may be NULL */
    sd_urdf_link *links;
    int nlinks, links_cap;
    sd_urdf_joint *joints;
    int njoints, joints_cap;
    sd_urdf_loop *loops;
    int nloops, loops_cap;
    sd_urdf_coupling *couplings;
    int ncouplings, couplings_cap;
    size_t flex_file_bytes;  /* bytes of <soadyn:flexible file=> data read so far (SD_URDF_MAX_FLEX_FILE_BYTES) */
    char *warning;           /* a reader's one warning of what it drops (the SDF reader's), kept on the
                                model; NULL if none */
    int has_gravity;         /* <soadyn:gravity xyz="..."/> under <robot>: the model's gravity, m/s^2 */
    double gravity[3];
} sd_urdf_robot;

/* Release everything the robot owns (the struct itself is the caller's). */
void sd_urdf_robot_clear(sd_urdf_robot *robot);

/* Turn a parsed robot into a model; see urdf.h for what the options do. */
sd_status sd_urdf_robot_build(sd_urdf_robot *robot, const sd_urdf_options *options, sd_model **model,
                              sd_error *err);

/* Whether node is soadyn's extension element <soadyn:NAME>, its namespace declared or not
 * (urdf_flex.c). */
struct _xmlNode; /* libxml2's xmlNode */
int sd_urdf_is_soadyn(const struct _xmlNode *node, const char *name);

/* ---------------------------------------------------------------- shared by urdf_build.c and urdf_loops.c */

/* A name and its index in the robot's links or joints, in a table sorted by name. */
typedef struct sd_urdf_named {
    const char *name;
    int index;
} sd_urdf_named;

/* Index of `name` in a sorted table of n entries (its first definition), -1 if absent. */
int sd_urdf_find_named(const sd_urdf_named *table, int n, const char *name);

/* What urdf_loops.c needs of the tree that urdf_build.c resolved. */
typedef struct sd_urdf_tree {
    const sd_urdf_robot *robot;
    const sd_urdf_named *link_names, *joint_names; /* sorted */
    const int *host;         /* per link: the link whose body carries it; -1: the inertial frame */
    int mimic_independent;   /* sd_urdf_options.mimic_independent */
    const char *src;
    sd_error *err;
} sd_urdf_tree;

/* Check every <mimic> (it names another revolute, continuous or prismatic joint of the file, not
 * itself; a nonzero multiplier when it becomes a coupling) and the URDF+ elements (names unique
 * among them, links and joints that exist, joints that have one coordinate), each error at the
 * element's file:line. Before any body is added. */
sd_status sd_urdf_check_constraints(const sd_urdf_tree *tree);

/* Add the closure constraints to the builder, after its bodies and frames: each <loop>, then each
 * <coupling> (document order), then each <mimic> of a moving joint as a coupling unless the
 * options keep mimic joints independent. */
sd_status sd_urdf_add_constraints(const sd_urdf_tree *tree, sd_builder *builder);

/* ---------------------------------------------------------------- flexible links (urdf_flex.c) */

typedef struct sd_urdf_flex sd_urdf_flex;
struct _xmlNode;

/* <soadyn:flexible> of a <link>, if any: its model is loaded (data file or beam) into link->flex.
 * *file_bytes counts the data files' bytes read for this URDF, bounded by SD_URDF_MAX_FLEX_FILE_BYTES. */
sd_status sd_urdf_read_flexible(const char *src, sd_error *err, const struct _xmlNode *link_node, const char *owner,
                                sd_urdf_link *link, size_t *file_bytes);
/* <soadyn:node index> of a <joint>, if any (has_node, parent_node, node_line). */
sd_status sd_urdf_read_node(const char *src, sd_error *err, const struct _xmlNode *joint_node, const char *owner,
                            sd_urdf_joint *joint);
/* Check the joints' nodes against their parents' models and make the flexible links' bodies
 * flexible (sd_builder_set_flexible), after the bodies are added. */
sd_status sd_urdf_add_flexible(const sd_urdf_robot *robot, const int *host, sd_builder *builder, sd_error *err);
void sd_urdf_flex_free(sd_urdf_flex *flex);
/* The nodes' mass of a flexible link (0 for a rigid one), for the zero-mass-leaf warning. */
double sd_urdf_flex_mass(const sd_urdf_link *link);

#endif /* SOADYN_IO_URDF_INTERNAL_H */
