/*
 * cli/cmd_view.c — `soadyn view MODEL -o view.html`: the model, or a motion of it read back from a
 * CSV written by `simulate --output`, as one self-contained HTML page (soadyn/view.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include <soadyn/config.h> /* SOADYN_HAS_VIEWER: refuse before any work when this build lacks it */

static const char help[] =
    "usage: soadyn view MODEL [--trajectory RUN.csv] [--frames] [--forces] [--mesh-path DIRS] -o VIEW.html\n"
    "\n"
    "Write one self-contained HTML file (no server, no network: three.js is inside) that draws the\n"
    "model in 3D and plays a motion: orbit controls, play/pause, a time slider, speed, body frames,\n"
    "the skeleton with joint axes, inertia boxes, inter-body force arrows, a camera that follows the\n"
    "root body, and a plot of trajectory columns beside the scene. Bodies are drawn with the model\n"
    "file's visual geometry (URDF <visual>, MJCF geoms; STL, OBJ, COLLADA .dae and glTF .glb meshes\n"
    "are embedded), else as their skeleton: capsules between joint origins, with the joint axes.\n"
    "Flexible bodies are drawn bent by their modal coordinates; closure constraints as pairs of\n"
    "points that meet. At most 1500 samples of the trajectory are kept, evenly spread (the page\n"
    "says so). Meshes not drawn are reported on stderr (and noted on the page).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE.html  the page (written as FILE.html.partial, renamed when complete)\n"
    "  --trajectory FILE.csv   the motion: a CSV of `soadyn simulate --output` for this model loaded\n"
    "                          the same way (columns matched by name); default: the model at rest\n"
    "                          at its reference configuration (MJCF's qpos0; URDF, SDF: neutral)\n"
    "  --frames                body frames shown when the page opens (a checkbox toggles them)\n"
    "  --forces                compute inter-body force arrows: f(k), the force the parent exerts on\n"
    "                          each body through its hinge (000 Eq 17), by the forward dynamics at each\n"
    "                          sample's q and u with zero joint forces (gravity, damping, springs act)\n"
    "  --title TEXT            the page title (default: the model's name)\n"
    "  --follow, --no-follow   the camera follows the root body, or not (default: when the root\n"
    "                          travels farther than the model's size)\n"
    "  --mesh-path DIRS        ':'-separated folders to find meshes in, after the model's folder and\n"
    "                          the folders above it, and before $ROS_PACKAGE_PATH's: package://PKG/F\n"
    "                          is looked for as DIR/PKG/F (and DIR/F when DIR is named PKG), a plain\n"
    "                          name F as DIR/F\n"
    "  --embed LOOPS, --independent J,..  as for simulate: checked (bad names are refused), but the\n"
    "                          page is the same: an embedding changes how a motion is computed\n"
    "                          (simulate --embed), not what it looks like\n"
    "  --floating              attach the root link with a free hinge\n"
    "  --keep-fixed            keep fixed joints as 0-dof bodies\n"
    CLI_GRAVITY_HELP
    "  --help                  this text\n"
    "\n"
    "`soadyn simulate MODEL --html FILE.html` writes the same page from the run directly.\n";

static void mesh_warning(void *user, const char *message)
{
    cli_view_meshes *state = user;
    if (state->told < CLI_VIEW_MESH_WARNINGS) {
        fprintf(stderr, "soadyn %s: warning: %s\n", state->command, message);
        ++state->told;
    } else {
        ++state->more;
    }
}

int cli_view_meshes_begin(sd_view_options *vo, cli_view_meshes *state, const char *command, const char *mesh_path)
{
    memset(state, 0, sizeof(*state));
    state->command = command;
    const char *ros = getenv("ROS_PACKAGE_PATH");
    const size_t a = mesh_path ? strlen(mesh_path) : 0, b = ros ? strlen(ros) : 0;
    state->path = malloc(a + b + 2);
    if (!state->path) {
        fprintf(stderr, "soadyn %s: out of memory\n", command);
        return CLI_FAILURE;
    }
    snprintf(state->path, a + b + 2, "%s%s%s", mesh_path ? mesh_path : "", a && b ? ":" : "", ros ? ros : "");
    vo->mesh_path = state->path;
    vo->mesh_warning = mesh_warning;
    vo->mesh_warning_user = state;
    return CLI_OK;
}

void cli_view_meshes_done(cli_view_meshes *state)
{
    if (state->more > 0)
        fprintf(stderr, "soadyn %s: warning: %d more mesh%s not drawn (the page counts them)\n", state->command,
                state->more, state->more > 1 ? "es" : "");
    free(state->path);
    state->path = NULL;
}

int cmd_view(int argc, char **argv)
{
    const char *output = NULL, *trajectory = NULL, *title = NULL, *mesh_path = NULL, *gravity = NULL;
    int frames = 0, forces = 0, floating = 0, keep_fixed = 0, follow = 0, no_follow = 0;
    cli_embed_args ea = {0};
    const cli_option options[] = {
        {"output", 1, &output, NULL}, {"trajectory", 1, &trajectory, NULL}, {"title", 1, &title, NULL},
        {"mesh-path", 1, &mesh_path, NULL}, {"follow", 0, NULL, &follow}, {"no-follow", 0, NULL, &no_follow},
        CLI_EMBED_OPTIONS(ea),
        {"frames", 0, NULL, &frames}, {"forces", 0, NULL, &forces}, {"floating", 0, NULL, &floating},
        {"keep-fixed", 0, NULL, &keep_fixed}, {"gravity", 1, &gravity, NULL}, {NULL, 0, NULL, NULL}};
    /* -o is --output (the option parser knows long names only) */
    char **args = malloc(sizeof(char *) * ((size_t)argc + 1));
    if (!args) {
        fprintf(stderr, "soadyn view: out of memory\n");
        return CLI_FAILURE;
    }
    for (int i = 0; i < argc; ++i) args[i] = strcmp(argv[i], "-o") == 0 ? (char *)"--output" : argv[i];
    args[argc] = NULL;
    const char *path;
    int rc = cli_parse("view", argc, args, options, help, &path);
    free(args);
    if (rc >= 0) return rc;
    if (!output) {
        fprintf(stderr, "soadyn view: no page to write: give -o FILE.html\n");
        return CLI_USAGE;
    }
    if (follow && no_follow) {
        fprintf(stderr, "soadyn view: --follow and --no-follow: give one\n");
        return CLI_USAGE;
    }
    if (!SOADYN_HAS_VIEWER) {
        fprintf(stderr, "soadyn view: viewer not offered: built without npm (SOADYN_WITH_VIEWER=OFF)\n");
        return CLI_USAGE;
    }
    sd_model *model;
    rc = cli_load_model("view", path, floating, keep_fixed, gravity, &model);
    if (rc != CLI_OK) return rc;
    sd_embedding *embedding = NULL;
    if ((rc = cli_embedding("view", model, &ea, NULL, &embedding)) != CLI_OK) {
        sd_model_free(model);
        return rc;
    }
    if (embedding) sd_embedding_free(embedding); /* checked only: the page does not depend on it */
    sd_trajectory *tr = NULL;
    sd_error err = {0};
    if (trajectory && sd_trajectory_read_csv(model, trajectory, &tr, &err) != SD_OK) {
        fprintf(stderr, "soadyn view: %s\n", err.message);
        sd_model_free(model);
        return CLI_USAGE;
    }
    sd_view_options vo;
    sd_view_options_init(&vo);
    vo.model_path = path;
    vo.title = title;
    vo.show_frames = frames;
    vo.show_forces = forces;
    vo.follow_root = follow ? 1 : no_follow ? -1 : 0;
    cli_view_meshes meshes;
    rc = cli_view_meshes_begin(&vo, &meshes, "view", mesh_path);
    if (rc == CLI_OK && sd_view_write_html(model, tr, &vo, output, &err) != SD_OK) {
        fprintf(stderr, "soadyn view: %s\n", err.message);
        rc = CLI_FAILURE;
    } else if (rc == CLI_OK) {
        cli_printf("wrote %s (%zu samples%s)\n", output, tr ? sd_trajectory_length(tr) : (size_t)1,
                   tr && sd_trajectory_length(tr) > 1500 ? ", 1500 shown" : "");
    }
    cli_view_meshes_done(&meshes);
    sd_trajectory_free(tr);
    sd_model_free(model);
    return rc;
}
