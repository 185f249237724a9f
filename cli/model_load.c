/*
 * cli/model_load.c — a model argument to a model: URDF, MJCF or SDF, chosen by the file's content
 * (sd_model_load_file), with the loader's messages on stderr. --floating and --keep-fixed apply to
 * URDF (and --keep-fixed to SDF); an MJCF file says itself how its bodies are attached.
 */
#include "cli.h"

int cli_load_model(const char *path, int floating, int keep_fixed, sd_model **model)
{
    sd_load_options opt = {0};
    opt.urdf.floating_base = floating;
    opt.urdf.keep_fixed_joints = keep_fixed;
    opt.sdf.keep_fixed_joints = keep_fixed;
    sd_error err = {0};
    *model = NULL;
    if (sd_model_load_file(path, &opt, model, NULL, &err) != SD_OK) {
        /* printed as given: the loader's "file:line: ..." is what editors jump to */
        fprintf(stderr, "%s\n", err.message[0] ? err.message : sd_status_name(err.status));
        return CLI_MODEL;
    }
    for (size_t i = 0; i < sd_model_nwarnings(*model); ++i)
        fprintf(stderr, "warning: %s\n", sd_model_warning(*model, i));
    return CLI_OK;
}
