/*
 * soadyn/view.h — a simulation you can watch: one self-contained HTML file (no server, no network)
 * that draws a model in 3D with three.js (bundled into the library at build time from the npm lock
 * file in viewer/) and plays a motion of it (issue #13).
 *
 * What is drawn for each body: the visual geometry of the model file when it gives primitives
 * (URDF <visual>, MJCF visual geoms: box, sphere, cylinder, capsule, ellipsoid) or meshes whose
 * files exist (STL, OBJ, COLLADA .dae, glTF .gltf/.glb; embedded in the page); a skeleton (a capsule
 * from each body's joint to its children's joints and its closure points) with the joint axes, drawn
 * for bodies without visuals and on request for all; flexible bodies bent by their modal coordinates
 * (a line through the deflected nodes, and their visuals deformed with it); each closure constraint
 * as a pair of points that meet; and a box at the body's centre of mass sized by its principal
 * inertias. The page has orbit controls, a camera that frames the model (and follows the root body
 * when it travels), play/pause, a time slider, a speed control, body frames and inter-body force
 * arrows (000 Eq 41, from the forward dynamics along the motion) on request, and a plot of one or
 * several trajectory columns beside the scene.
 *
 * Offered when the library is built with SOADYN_WITH_VIEWER (needs npm at build time); otherwise
 * sd_view_write_html answers SD_E_NOT_SUPPORTED saying so. config.h has SOADYN_HAS_VIEWER.
 */
#ifndef SOADYN_VIEW_H
#define SOADYN_VIEW_H

#include "export.h"
#include "model.h"
#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_view_options {
    const char *model_path; /* the model's file, re-read for its visual geometry and meshes (meshes
                               resolved beside it); NULL: capsules and inertia boxes only */
    const char *title;      /* the page title; NULL: the model's name */
    int show_frames;        /* body frames shown when the page opens (a checkbox toggles them) */
    int show_forces;        /* inter-body force arrows computed and shown (a checkbox toggles) */
    int follow_root;        /* the camera follows the root body: 1 yes, -1 no, 0 (default) when the
                               root travels farther than the model's size (a checkbox toggles) */
    const char *mesh_path;  /* more folders to find meshes in, ':'-separated (package://PKG/rest as
                               FOLDER/PKG/rest or, when FOLDER is named PKG, FOLDER/rest; a plain
                               name as FOLDER/name); NULL: none. Looked at after the model's folder */
    /* Told of each mesh named by the model file that is not drawn (not found, unreadable, or a format
     * not read), with a message naming it and why; NULL: not told (the page notes them anyway). */
    void (*mesh_warning)(void *user, const char *message);
    void *mesh_warning_user;
} sd_view_options;

SD_API void sd_view_options_init(sd_view_options *options);

/* Write the page to `path` (written as "<path>.partial", renamed when complete, as the CSV is).
 * trajectory: the motion to play (sd_trajectory_new + sd_trajectory_append, or
 * sd_trajectory_read_csv); NULL shows the model at its neutral configuration. */
SD_API sd_status sd_view_write_html(const sd_model *model, const sd_trajectory *trajectory,
                                    const sd_view_options *options, const char *path, sd_error *err);

/* Read a trajectory back from a CSV file written by sd_csv_open/sd_simulate (the columns are
 * matched to the model's coordinates by their labels; a missing or extra coordinate column is an
 * error naming it and the file:line). */
SD_API sd_status sd_trajectory_read_csv(const sd_model *model, const char *path, sd_trajectory **trajectory,
                                        sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_VIEW_H */
