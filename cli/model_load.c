/*
 * cli/model_load.c — a model argument to a model: the URDF loader, with its messages on stderr.
 */
#include "cli.h"

int cli_load_model(const char *path, int floating, int keep_fixed, sd_model **model)
{
    sd_urdf_options opt = {0};
    opt.floating_base = floating;
    opt.keep_fixed_joints = keep_fixed;
    sd_error err = {0};
    *model = NULL;
    if (sd_urdf_load_file(path, &opt, model, &err) != SD_OK) {
        /* printed as given: the loader's "file:line: ..." is what editors jump to */
        fprintf(stderr, "%s\n", err.message[0] ? err.message : sd_status_name(err.status));
        return CLI_MODEL;
    }
    for (size_t i = 0; i < sd_model_nwarnings(*model); ++i)
        fprintf(stderr, "warning: %s\n", sd_model_warning(*model, i));
    return CLI_OK;
}
