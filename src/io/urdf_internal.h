/*
 * io/urdf_internal.h — what the two halves of the URDF loader share: the robot as read from the
 * file (links and joints, still in URDF terms, each with its source line).
 *
 *   urdf.c        XML -> sd_urdf_robot (every number checked, every element's line kept)
 *   urdf_build.c  sd_urdf_robot -> sd_builder (tree checks, fixed-joint lumping, warnings)
 *
 * The XML itself is read by io/xml_read.c, the file by io/io_common.c. Private to the library;
 * not installed.
 */
#ifndef SOADYN_IO_URDF_INTERNAL_H
#define SOADYN_IO_URDF_INTERNAL_H

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
    int has_limits;
    double lower, upper, effort, velocity;
    const char *unbounded_limit; /* the first <limit> attribute beyond the physical bounds, read as
                                    "no limit" (a warning); NULL if none */
    int limit_line;
    double damping, friction;
    char *mimic;             /* joint this one mimics; NULL if none */
    int mimic_line;
    double mimic_multiplier, mimic_offset;
} sd_urdf_joint;

/* The whole file. */
typedef struct sd_urdf_robot {
    const char *source;      /* file name used in messages (not owned) */
    char *name;              /* robot name; may be NULL */
    sd_urdf_link *links;
    int nlinks, links_cap;
    sd_urdf_joint *joints;
    int njoints, joints_cap;
} sd_urdf_robot;

/* Release everything the robot owns (the struct itself is the caller's). */
void sd_urdf_robot_clear(sd_urdf_robot *robot);

/* Turn a parsed robot into a model; see urdf.h for what the options do. */
sd_status sd_urdf_robot_build(sd_urdf_robot *robot, const sd_urdf_options *options, sd_model **model,
                              sd_error *err);

#endif /* SOADYN_IO_URDF_INTERNAL_H */
