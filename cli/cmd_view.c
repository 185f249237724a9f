/*
 * cli/cmd_view.c — `soadyn view MODEL -o view.html`: the model, or a motion of it read back from a
 * CSV written by `simulate --output`, as one self-contained HTML page (soadyn/view.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include <soadyn/config.h> /* SOADYN_HAS_VIEWER: refuse before any work when this build lacks it */

static const char help[] =
    "usage: soadyn view MODEL [--trajectory RUN.csv] [--frames] [--forces] -o VIEW.html\n"
    "\n"
    "Write one self-contained HTML file (no server, no network: three.js is inside) that draws the\n"
    "model in 3D and plays a motion: orbit controls, play/pause, a time slider, speed, body frames,\n"
    "inertia boxes, inter-body force arrows, and a plot of any trajectory column beside the scene.\n"
    "Bodies are drawn with the model file's visual geometry (URDF <visual>, MJCF geoms; STL and OBJ\n"
    "meshes found beside the file are embedded), else as capsules between joint frames and a box at\n"
    "the centre of mass sized by the principal inertias. At most 1500 samples of the trajectory are\n"
    "kept, evenly spread (the page says so).\n"
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
    "  --embed LOOPS, --independent J,..  as for simulate: checked (bad names are refused), but the\n"
    "                          page is the same: an embedding changes how a motion is computed\n"
    "                          (simulate --embed), not what it looks like\n"
    "  --floating              attach the root link with a free hinge\n"
    "  --keep-fixed            keep fixed joints as 0-dof bodies\n"
    CLI_GRAVITY_HELP
    "  --help                  this text\n"
    "\n"
    "`soadyn simulate MODEL --html FILE.html` writes the same page from the run directly.\n";

int cmd_view(int argc, char **argv)
{
    const char *output = NULL, *trajectory = NULL, *title = NULL, *gravity = NULL;
    int frames = 0, forces = 0, floating = 0, keep_fixed = 0;
    cli_embed_args ea = {0};
    const cli_option options[] = {
        {"output", 1, &output, NULL}, {"trajectory", 1, &trajectory, NULL}, {"title", 1, &title, NULL},
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
    if (sd_view_write_html(model, tr, &vo, output, &err) != SD_OK) {
        fprintf(stderr, "soadyn view: %s\n", err.message);
        rc = CLI_FAILURE;
    } else {
        cli_printf("wrote %s (%zu samples%s)\n", output, tr ? sd_trajectory_length(tr) : (size_t)1,
                   tr && sd_trajectory_length(tr) > 1500 ? ", 1500 shown" : "");
    }
    sd_trajectory_free(tr);
    sd_model_free(model);
    return rc;
}
