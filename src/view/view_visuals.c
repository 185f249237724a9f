/*
 * src/view/view_visuals.c — what a model file says its bodies look like, placed in soadyn's body
 * frames for the viewer. The model file is read again (libxml2) because the model keeps only
 * dynamics; the format is told by the root element, as sd_model_load_file does.
 *
 * URDF: each <link>'s <visual>s (origin xyz/rpy; box, cylinder, sphere, mesh with scale; material
 * colour given inline or by name). A link's frame is its body's frame; a link merged by a fixed
 * joint is a model frame of that name (sd_model_frame_index) on its host body, whose placement
 * carries the visual over.
 *
 * MJCF: each body's geoms of groups 0-2 (those MuJoCo shows by default), through the default
 * classes (mjcf_read.c): sphere, capsule, cylinder, box, ellipsoid; pos and any orientation, or
 * fromto; rgba, else its material's rgba. soadyn's frame of a body with joints sits at the anchor of
 * its last joint (mjcf_build.c: the MJCF body frame is that frame moved by -anchor, at any q), so a
 * geom at X in the MJCF body frame is at T(-anchor) X in soadyn's. Mesh geoms are not drawn (MuJoCo
 * re-centres meshes on their inertia frame when compiling; not reproduced here): counted as missing.
 *
 * Other formats (SDF) give no visuals: the page draws the fallback shapes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "internal.h"
#include "io/io_common.h"
#include "io/mjcf_internal.h"
#include "io/xml_read.h"
#include "view/view_internal.h"

view_visual *sd_view_visual_add(view_visuals *vs, int body)
{
    if (vs->n == vs->cap) {
        const int cap = vs->cap ? 2 * vs->cap : 16;
        view_visual *a = realloc(vs->items, sizeof(*a) * (size_t)cap);
        if (!a) return NULL;
        vs->items = a;
        vs->cap = cap;
    }
    view_visual *v = &vs->items[vs->n++];
    memset(v, 0, sizeof(*v));
    v->body = body;
    sd_transform_identity(&v->X);
    return v;
}

void sd_view_visuals_free(view_visuals *vs)
{
    if (!vs) return;
    for (int i = 0; i < vs->n; ++i) {
        free(vs->items[i].vertices);
        free(vs->items[i].indices);
        free(vs->items[i].file_data);
    }
    free(vs->items);
    memset(vs, 0, sizeof(*vs));
}

static sd_status oom(const char *path, sd_error *err) { return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", path); }

/* Count a mesh not drawn, keep the first name for the page's note, and tell the caller why. */
static void note_missing(view_visuals *vs, const char *what, const char *why)
{
    if (vs->meshes_missing++ == 0) snprintf(vs->first_missing, sizeof(vs->first_missing), "%s", what);
    if (vs->options && vs->options->mesh_warning) {
        char message[1024];
        snprintf(message, sizeof(message), "mesh %s not drawn: %s", what, why);
        vs->options->mesh_warning(vs->options->mesh_warning_user, message);
    }
}

static int file_exists(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp) fclose(fp);
    return fp != NULL;
}

/* The folder of `path` with its slash ("" for a bare name: the working folder). */
static void folder_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    const size_t n = slash ? (size_t)(slash - path + 1) : 0;
    snprintf(dir, size, "%.*s", (int)n, path);
}

/* Try folder + up times "../" + rest; 1 (path filled) when that file exists. */
static int try_path(char *path, size_t size, const char *folder, size_t folder_len, int up, const char *rest)
{
    int n = snprintf(path, size, "%.*s%s", (int)folder_len, folder, folder_len && folder[folder_len - 1] != '/' ? "/" : "");
    for (int i = 0; i < up && n >= 0 && (size_t)n < size; ++i) n += snprintf(path + n, size - (size_t)n, "../");
    if (n < 0 || (size_t)n >= size) return 0;
    if ((size_t)snprintf(path + n, size - (size_t)n, "%s", rest) >= size - (size_t)n) return 0;
    return file_exists(path);
}

/* Where the mesh `name` (as the model file writes it) is, into path; 0 when nowhere.
 *   file:///abs               the absolute path;
 *   package://PKG/rest        rest, then PKG/rest, beside the model file and in up to three folders
 *                             above it (a package's urdf/ folder, the package's parent); then in each
 *                             folder F of mesh_path (the CLI's --mesh-path and ROS_PACKAGE_PATH):
 *                             F/PKG/rest, and F/rest when F is named PKG;
 *   anything else             beside the model file (absolute as it is), then F/name. */
static int find_mesh(const view_visuals *vs, const char *dir, const char *name, char *path, size_t size)
{
    if (strncmp(name, "file://", 7) == 0) return (size_t)snprintf(path, size, "%s", name + 7) < size && file_exists(path);
    const char *extra = vs->options ? vs->options->mesh_path : NULL;
    if (strncmp(name, "package://", 10) == 0) {
        const char *pkg = name + 10, *slash = strchr(pkg, '/');
        const char *rest = slash ? slash + 1 : pkg;
        const size_t pkg_len = slash ? (size_t)(slash - pkg) : strlen(pkg);
        for (int up = 0; up < 4; ++up)
            if (try_path(path, size, dir, strlen(dir), up, rest) || try_path(path, size, dir, strlen(dir), up, pkg)) return 1;
        for (const char *f = extra; f && *f;) {
            const char *end = strchr(f, ':');
            const size_t len = end ? (size_t)(end - f) : strlen(f);
            size_t base = len;
            while (base > 0 && f[base - 1] == '/') --base; /* F's own name, without trailing slashes */
            size_t start = base;
            while (start > 0 && f[start - 1] != '/') --start;
            if (len > 0 && (try_path(path, size, f, len, 0, pkg) ||
                            (base - start == pkg_len && strncmp(f + start, pkg, pkg_len) == 0 &&
                             try_path(path, size, f, len, 0, rest))))
                return 1;
            f = end ? end + 1 : NULL;
        }
        return 0;
    }
    if (name[0] == '/') return (size_t)snprintf(path, size, "%s", name) < size && file_exists(path);
    if (try_path(path, size, dir, strlen(dir), 0, name)) return 1;
    for (const char *f = extra; f && *f;) {
        const char *end = strchr(f, ':');
        const size_t len = end ? (size_t)(end - f) : strlen(f);
        if (len > 0 && try_path(path, size, f, len, 0, name)) return 1;
        f = end ? end + 1 : NULL;
    }
    return 0;
}

/* Load the mesh `name` (as the file writes it) into v, or count it missing (and say why). */
static sd_status load_mesh(view_visuals *vs, view_visual *v, const char *dir, const char *name, sd_error *err)
{
    char path[4096];
    if (!find_mesh(vs, dir, name, path, sizeof(path))) {
        note_missing(vs, name, vs->options && vs->options->mesh_path && *vs->options->mesh_path
                                   ? "not found beside the model file, in the folders above it, or on the mesh path"
                                   : "not found beside the model file or in the folders above it (no mesh path given)");
        return SD_OK;
    }
    sd_error merr = {0};
    const sd_status st = sd_view_mesh_load(path, v, &merr);
    if (st == SD_E_MEMORY) return sd_error_set(err, st, "%s", merr.message);
    if (st != SD_OK) note_missing(vs, name, merr.message); /* unreadable or another format: the fallback shapes */
    return SD_OK;
}

static int parse_numbers(const xmlNode *node, const char *attr, double *out, int max)
{
    xmlChar *s = xmlGetNoNsProp(node, (const xmlChar *)attr);
    if (!s) return 0;
    int n = 0;
    const char *p = (const char *)s;
    while (n < max) {
        char *end;
        const double x = strtod(p, &end);
        if (end == p) break;
        out[n++] = x;
        p = end;
    }
    xmlFree(s);
    return n;
}

static const xmlNode *child(const xmlNode *node, const char *name)
{
    for (const xmlNode *c = node ? node->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0) return c;
    return NULL;
}

static int is_element(const xmlNode *c, const char *name)
{
    return c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0;
}

/* ---------------------------------------------------------------- URDF */

/* <material>'s colour: inline <color rgba>, else the top-level material of that name. */
static int urdf_color(const xmlNode *robot, const xmlNode *material, double rgba[4])
{
    if (!material) return 0;
    if (parse_numbers(child(material, "color"), "rgba", rgba, 4) == 4) return 1;
    xmlChar *name = xmlGetNoNsProp(material, (const xmlChar *)"name");
    int got = 0;
    for (const xmlNode *c = robot->children; c && name && !got; c = c->next) {
        if (!is_element(c, "material")) continue;
        xmlChar *n = xmlGetNoNsProp(c, (const xmlChar *)"name");
        if (n && xmlStrcmp(n, name) == 0) got = parse_numbers(child(c, "color"), "rgba", rgba, 4) == 4;
        xmlFree(n);
    }
    xmlFree(name);
    return got;
}

/* URDF's rpy: R = Rz(yaw) Ry(pitch) Rx(roll). */
static void rpy_matrix(const double rpy[3], double R[9])
{
    const double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]), cy = cos(rpy[2]),
                 sy = sin(rpy[2]);
    const double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                         sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                         -sp,     cp * sr,                cp * cr};
    memcpy(R, M, sizeof(M));
}

static sd_status urdf_visuals(const sd_model *m, const xmlNode *robot, const char *dir, view_visuals *vs,
                              const char *path, sd_error *err)
{
    for (const xmlNode *link = robot->children; link; link = link->next) {
        if (!is_element(link, "link")) continue;
        xmlChar *name = xmlGetNoNsProp(link, (const xmlChar *)"name");
        int body = name ? sd_model_body_index(m, (const char *)name) : -1;
        sd_transform X_host; /* the link's frame in its body's */
        sd_transform_identity(&X_host);
        if (body < 0 && name) {
            const int f = sd_model_frame_index(m, (const char *)name);
            if (f >= 0) {
                body = sd_model_frame_body(m, f);
                X_host = *sd_model_frame_placement(m, f);
            }
        }
        xmlFree(name);
        if (body < 0) continue; /* the inertial frame ("world") */
        for (const xmlNode *vis = link->children; vis; vis = vis->next) {
            if (!is_element(vis, "visual")) continue;
            const xmlNode *geo = child(vis, "geometry"), *shape = NULL;
            for (const xmlNode *c = geo ? geo->children : NULL; c && !shape; c = c->next)
                if (c->type == XML_ELEMENT_NODE) shape = c;
            if (!shape) continue;
            view_visual *v = sd_view_visual_add(vs, body);
            if (!v) return oom(path, err);
            double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
            const xmlNode *origin = child(vis, "origin");
            if (origin) {
                parse_numbers(origin, "xyz", xyz, 3);
                parse_numbers(origin, "rpy", rpy, 3);
            }
            sd_transform X_link;
            rpy_matrix(rpy, X_link.R);
            memcpy(X_link.p, xyz, sizeof(xyz));
            sd_transform_compose(&X_host, &X_link, &v->X);
            v->has_rgba = urdf_color(robot, child(vis, "material"), v->rgba);
            int ok = 1;
            if (is_element(shape, "box")) {
                v->shape = VIEW_BOX;
                ok = parse_numbers(shape, "size", v->size, 3) == 3;
                for (int i = 0; i < 3; ++i) v->size[i] *= 0.5;
            } else if (is_element(shape, "sphere")) {
                v->shape = VIEW_SPHERE;
                ok = parse_numbers(shape, "radius", v->size, 1) == 1;
            } else if (is_element(shape, "cylinder") || is_element(shape, "capsule")) {
                v->shape = is_element(shape, "cylinder") ? VIEW_CYLINDER : VIEW_CAPSULE;
                double len = 0;
                ok = parse_numbers(shape, "radius", v->size, 1) == 1 && parse_numbers(shape, "length", &len, 1) == 1;
                v->size[1] = 0.5 * len;
            } else if (is_element(shape, "mesh")) {
                v->shape = VIEW_MESH;
                v->size[0] = v->size[1] = v->size[2] = 1.0;
                const int ns = parse_numbers(shape, "scale", v->size, 3);
                if (ns == 1) v->size[1] = v->size[2] = v->size[0];
                xmlChar *file = xmlGetNoNsProp(shape, (const xmlChar *)"filename");
                if (file) snprintf(v->name, sizeof(v->name), "%s", (const char *)file);
                sd_status st = file ? load_mesh(vs, v, dir, (const char *)file, err) : SD_OK;
                xmlFree(file);
                if (st != SD_OK) return st;
                ok = v->vertices != NULL || v->file_data != NULL;
            } else {
                ok = 0;
            }
            if (!ok) --vs->n; /* not drawable as written: the body may still have others */
        }
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- MJCF */

typedef struct mj_walk {
    const sd_model *m;
    mjcf_ctx *ctx;
    view_visuals *vs;
    const xmlNode *asset;
    sd_error *err;
} mj_walk;

static const xmlNode *asset_named(const mj_walk *w, const char *kind, const char *name)
{
    for (const xmlNode *c = w->asset ? w->asset->children : NULL; c; c = c->next) {
        if (!is_element(c, kind)) continue;
        xmlChar *n = xmlGetNoNsProp(c, (const xmlChar *)"name");
        const int same = n && strcmp((const char *)n, name) == 0;
        xmlFree(n);
        if (same) return c;
    }
    return NULL;
}

/* The rotation taking z to the unit vector z (fromto), the smallest one. */
static void rotation_z_to(const double z[3], double R[9])
{
    const double c = z[2];
    double a[3] = {-z[1], z[0], 0.0};
    const double s = sqrt(a[0] * a[0] + a[1] * a[1]);
    if (s < 1e-12) {
        const double d[9] = {1, 0, 0, 0, c > 0 ? 1 : -1, 0, 0, 0, c > 0 ? 1 : -1};
        memcpy(R, d, sizeof(d));
        return;
    }
    a[0] /= s;
    a[1] /= s;
    sd_m3_axis_angle(a, atan2(s, c), R);
}

static sd_status mj_geom(mj_walk *w, const xmlNode *g, int body, const sd_transform *O, int childclass)
{
    mjcf_ctx *ctx = w->ctx;
    int cls;
    sd_status st = mjcf_element_class(ctx, g, "geom", childclass, &cls);
    double group = 0;
    if (st == SD_OK) st = mjcf_number(ctx, g, MJCF_KIND_GEOM, cls, "geom", "group", 0.0, &group);
    if (st != SD_OK || group > 2) return st;
    static const char *const types[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf", NULL};
    int type;
    st = mjcf_keyword(ctx, g, MJCF_KIND_GEOM, cls, "geom", "type", types, 2, &type);
    if (st != SD_OK || type < 2 || type == 8) return st; /* planes, height fields, sdf: scenery */
    if (type == 7) {
        char *mesh = mjcf_attr(ctx, g, MJCF_KIND_GEOM, cls, "mesh");
        note_missing(w->vs, mesh ? mesh : "(mesh geom)",
                     "MJCF mesh geoms are not drawn (MuJoCo re-centres a mesh on its inertia frame when compiling)");
        free(mesh);
        return SD_OK;
    }
    double size[3] = {0, 0, 0}, ft[6], rgba[4];
    int ns = 0, nft = 0, nrgba = 0;
    st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, "geom", "size", 1, 3, size, &ns);
    if (st == SD_OK) st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, "geom", "fromto", 6, 6, ft, &nft);
    if (st == SD_OK) st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, "geom", "rgba", 4, 4, rgba, &nrgba);
    if (st != SD_OK) return st;
    sd_transform X;
    sd_transform_identity(&X);
    if (nft == 6) {
        double z[3] = {ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]};
        const double len = sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
        if (!(len > 1e-12)) return SD_OK;
        for (int i = 0; i < 3; ++i) {
            X.p[i] = 0.5 * (ft[i] + ft[i + 3]);
            z[i] /= len;
        }
        rotation_z_to(z, X.R);
        if (type == 3 || type == 5) size[1] = 0.5 * len; /* capsule, cylinder: radius, half-length */
        else size[1] = size[0], size[2] = 0.5 * len;     /* box, ellipsoid (as MuJoCo 2.2.2 compiles them) */
    } else {
        int n;
        st = mjcf_numbers(ctx, g, MJCF_KIND_GEOM, cls, "geom", "pos", 3, 3, X.p, &n);
        if (st == SD_OK) st = mjcf_orientation(ctx, g, MJCF_KIND_GEOM, cls, "geom", X.R);
        if (st != SD_OK) return st;
    }
    view_visual *v = sd_view_visual_add(w->vs, body);
    if (!v) return oom(ctx->source, w->err);
    static const view_shape shapes[] = {0, 0, VIEW_SPHERE, VIEW_CAPSULE, VIEW_ELLIPSOID, VIEW_CYLINDER, VIEW_BOX};
    v->shape = shapes[type];
    memcpy(v->size, size, sizeof(size));
    sd_transform_compose(O, &X, &v->X);
    if (nrgba == 4) {
        memcpy(v->rgba, rgba, sizeof(rgba));
        v->has_rgba = 1;
    } else {
        char *mat = mjcf_attr(ctx, g, MJCF_KIND_GEOM, cls, "material");
        const xmlNode *mn = mat ? asset_named(w, "material", mat) : NULL;
        v->has_rgba = mn && parse_numbers(mn, "rgba", v->rgba, 4) == 4;
        free(mat);
    }
    return SD_OK;
}

static sd_status mj_body(mj_walk *w, const xmlNode *node, int childclass)
{
    mjcf_ctx *ctx = w->ctx;
    xmlChar *cc = xmlGetNoNsProp(node, (const xmlChar *)"childclass");
    if (cc) {
        const int i = mjcf_class_index(ctx, (const char *)cc);
        if (i >= 0) childclass = i;
        xmlFree(cc);
    }
    xmlChar *name = xmlGetNoNsProp(node, (const xmlChar *)"name");
    const int body = name ? sd_model_body_index(w->m, (const char *)name) : -1;
    xmlFree(name);
    sd_transform O; /* the MJCF body frame in soadyn's body frame: T(-anchor of the last joint) */
    sd_transform_identity(&O);
    sd_status st = SD_OK;
    for (const xmlNode *c = node->children; c && st == SD_OK; c = c->next) {
        if (is_element(c, "freejoint")) {
            sd_transform_identity(&O);
        } else if (is_element(c, "joint")) {
            int cls, n = 0;
            double a[3] = {0, 0, 0};
            char *type = NULL;
            st = mjcf_element_class(ctx, c, "joint", childclass, &cls);
            if (st == SD_OK) type = mjcf_attr(ctx, c, MJCF_KIND_JOINT, cls, "type");
            if (st == SD_OK) st = mjcf_numbers(ctx, c, MJCF_KIND_JOINT, cls, "joint", "pos", 3, 3, a, &n);
            const int is_free = type && strcmp(type, "free") == 0;
            free(type);
            sd_transform_identity(&O);
            if (!is_free)
                for (int i = 0; i < 3; ++i) O.p[i] = -a[i];
        }
    }
    for (const xmlNode *c = node->children; c && st == SD_OK; c = c->next) {
        if (body >= 0 && is_element(c, "geom")) st = mj_geom(w, c, body, &O, childclass);
        else if (is_element(c, "body")) st = mj_body(w, c, childclass);
    }
    return st;
}

static sd_status mjcf_visuals(const sd_model *m, const char *path, view_visuals *vs, sd_error *err)
{
    char *text = NULL;
    size_t length = 0;
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    mjcf_ctx ctx;
    st = mjcf_open(&ctx, text, length, path, err);
    free(text);
    if (st != SD_OK) return st;
    const xmlNode *root = xmlDocGetRootElement(ctx.doc);
    mj_walk w = {m, &ctx, vs, child(root, "asset"), err};
    for (const xmlNode *wb = root->children; wb && st == SD_OK; wb = wb->next)
        if (is_element(wb, "worldbody"))
            for (const xmlNode *c = wb->children; c && st == SD_OK; c = c->next)
                if (is_element(c, "body")) st = mj_body(&w, c, 0);
    mjcf_close(&ctx);
    return st;
}

/* ---------------------------------------------------------------- either */

sd_status sd_view_read_visuals(const sd_model *m, const char *path, const sd_view_options *options,
                               view_visuals *vs, sd_error *err)
{
    memset(vs, 0, sizeof(*vs));
    vs->options = options;
    /* read as the model was (io/xml_read.h): a regular file within the size limit, libxml2 quiet
     * and closed (xmlReadFile would read a FIFO put there since, and print its messages) */
    char *text = NULL;
    size_t length = 0;
    xmlDoc *doc = NULL;
    sd_xml_quiet quiet;
    sd_xml_quiet_begin(&quiet);
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st == SD_OK) st = sd_xml_read(text, length, path, &doc, err);
    free(text);
    const xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    char dir[4096];
    folder_of(path, dir, sizeof(dir));
    if (st == SD_OK && root && xmlStrcmp(root->name, (const xmlChar *)"robot") == 0)
        st = urdf_visuals(m, root, dir, vs, path, err);
    const int mujoco = root && xmlStrcmp(root->name, (const xmlChar *)"mujoco") == 0;
    xmlFreeDoc(doc);
    if (st == SD_OK && mujoco) st = mjcf_visuals(m, path, vs, err);
    st = sd_xml_quiet_end(&quiet, st, NULL, path, err);
    if (st != SD_OK) sd_view_visuals_free(vs);
    return st;
}
