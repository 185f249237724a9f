/*
 * src/view/view_internal.h — what the parts of the viewer share (issue #13, soadyn/view.h).
 *
 *   view_page.c      the page: frames decimated, world placements (sd_kinematics), closure points,
 *                    flexible-body deflections and inter-body forces (sd_forward_dynamics_ex) per
 *                    frame, the skeleton, the JSON data and the bundled script written into one
 *                    HTML file
 *   view_visuals.c   the visual geometry of the model file (URDF <visual>, MJCF geoms), re-read with
 *                    libxml2 and placed in soadyn's body frames; where mesh files are found
 *   view_mesh.c      STL (binary and ASCII) and OBJ meshes read into vertex and index arrays;
 *                    COLLADA and glTF files checked and kept whole for the page's loaders
 *   view_script.c    generated at build time (viewer/embed.mjs): three.js and viewer/src bundled
 *   trajectory_csv.c sd_trajectory_read_csv (always built: needs nothing)
 *
 * Private to the library; not installed.
 */
#ifndef SOADYN_VIEW_INTERNAL_H
#define SOADYN_VIEW_INTERNAL_H

#include <stddef.h>

#include <soadyn/view.h>

/* VIEW_MESH: triangles read here (STL, OBJ); VIEW_MESH_FILE: a file the page parses (COLLADA, glTF). */
typedef enum view_shape {
    VIEW_BOX, VIEW_SPHERE, VIEW_CYLINDER, VIEW_CAPSULE, VIEW_ELLIPSOID, VIEW_MESH, VIEW_MESH_FILE
} view_shape;

/* One visual of a body, placed in soadyn's body frame. */
typedef struct view_visual {
    int body;          /* body index */
    view_shape shape;
    double size[3];    /* box: half-extents; sphere: radius; cylinder, capsule: radius, half-length
                          (axis z); ellipsoid: semi-axes; mesh: scale per axis */
    sd_transform X;    /* the visual's frame in the body frame */
    double rgba[4];
    int has_rgba;
    float *vertices;   /* mesh: 3 per vertex, in the mesh file's units (scaled by size) */
    unsigned *indices; /* mesh: 3 per triangle */
    size_t nvertices, ntriangles;
    unsigned char *file_data; /* mesh file: its bytes, embedded in the page (base64) */
    size_t file_size;
    const char *file_format;  /* mesh file: "dae", "glb" or "gltf" */
    char name[256];           /* mesh: the name the model file gives it */
} view_visual;

typedef struct view_visuals {
    view_visual *items;
    int n, cap;
    int meshes_missing; /* meshes named by the file that are not drawn (not found, unreadable) */
    char first_missing[256];
    const sd_view_options *options; /* mesh_path and mesh_warning; may be NULL */
} view_visuals;

/* The visuals of the model file `path` (URDF or MJCF, told by its root element; other formats give
 * none) for the bodies of `model` (loaded from that file). Meshes are resolved beside the file, in
 * the folders above it (URDF package:// names) and on options->mesh_path (view_visuals.c says in
 * which order). An unreadable file is an error; a mesh that cannot be drawn is counted in
 * meshes_missing and told to options->mesh_warning, not an error. options may be NULL. */
sd_status sd_view_read_visuals(const sd_model *model, const char *path, const sd_view_options *options,
                               view_visuals *out, sd_error *err);
void sd_view_visuals_free(view_visuals *visuals);
/* Append one zeroed visual of body `body`; NULL when out of memory. */
view_visual *sd_view_visual_add(view_visuals *visuals, int body);

/* Read an STL (binary or ASCII) or OBJ file into v->vertices / v->indices (shape VIEW_MESH), or a
 * COLLADA (.dae) or glTF (.glb, .gltf with its buffers inline) file into v->file_data (shape
 * VIEW_MESH_FILE: the page parses it with three.js's loaders). SD_E_IO when it cannot be read,
 * SD_E_NOT_SUPPORTED for another format, SD_E_PARSE for a malformed file (messages name it). */
sd_status sd_view_mesh_load(const char *path, view_visual *v, sd_error *err);

/* The bundled page script (view_script.c, generated). */
extern const unsigned char sd_view_script[];
extern const size_t sd_view_script_size;

#endif /* SOADYN_VIEW_INTERNAL_H */
