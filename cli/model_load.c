/*
 * cli/model_load.c — a model argument to a model: URDF, MJCF or SDF, chosen by the file's content
 * (sd_model_load_file), with the loader's messages on stderr. --floating and --keep-fixed apply to
 * URDF (and --keep-fixed to SDF); an MJCF file says itself how its bodies are attached. --gravity
 * replaces the file's gravity. Also the embedding every command builds the same way from --embed /
 * --independent.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --gravity's text into the model's gravity. */
static int apply_gravity(const char *cmd, const char *text, sd_model *model)
{
    if (text == NULL) return CLI_OK;
    double g[3];
    int n = 0;
    char part[64];
    for (const char *s = text;; ++n) { /* exactly three strict numbers, comma-separated */
        const char *comma = strchr(s, ',');
        const size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (n == 3 || len == 0 || len >= sizeof part) {
            n = -1;
            break;
        }
        memcpy(part, s, len);
        part[len] = '\0';
        if (cli_parse_double(part, &g[n])) {
            n = -1;
            break;
        }
        if (!comma) {
            ++n;
            break;
        }
        s = comma + 1;
    }
    if (n != 3) {
        fprintf(stderr, "soadyn %s: --gravity: '%s' is not three finite numbers GX,GY,GZ (m/s^2)\n", cmd, text);
        return CLI_USAGE;
    }
    sd_error err = {0};
    if (sd_model_set_gravity(model, g, &err) != SD_OK) {
        fprintf(stderr, "soadyn %s: --gravity %s: %s\n", cmd, text, err.message);
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_load_model(const char *cmd, const char *path, int floating, int keep_fixed, const char *gravity,
                   sd_model **model)
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
        return err.status == SD_E_MEMORY ? CLI_FAILURE : CLI_MODEL; /* the file may be fine: a run-time failure */
    }
    for (size_t i = 0; i < sd_model_nwarnings(*model); ++i)
        fprintf(stderr, "warning: %s\n", sd_model_warning(*model, i));
    const int rc = apply_gravity(cmd, gravity, *model);
    if (rc != CLI_OK) {
        sd_model_free(*model);
        *model = NULL;
    }
    return rc;
}

/* Whether anything is to be embedded: an option given, or a constraint the model file embeds. */
static int embedding_asked(const sd_model *model, const cli_embed_args *args)
{
    if (args->embed || args->independent) return 1;
    for (int c = 0; c < sd_model_nconstraints(model); ++c)
        if (sd_model_constraint_embed(model, c) == 1) return 1;
    return 0;
}

/* Whether q closes every loop (to 1e-9, as sd_simulate judges its start). */
static int closes_loops(const sd_model *model, const double *q)
{
    const int nc = sd_model_nconstraint_rows(model);
    sd_data *d = sd_data_new(model);
    double *res = malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1));
    int closed = d && res && sd_constraint_residuals(model, d, q, NULL, res, NULL) == SD_OK;
    for (int i = 0; closed && i < nc; ++i) closed = fabs(res[i]) <= 1e-9;
    free(res);
    sd_data_free(d);
    return closed;
}

int cli_embedding(const char *cmd, const sd_model *model, const cli_embed_args *args, const double *q,
                  sd_embedding **embedding)
{
    *embedding = NULL;
    if (!embedding_asked(model, args)) return CLI_OK;
    if (q && !closes_loops(model, q)) q = NULL; /* the split at the library's closed reference instead */
    if (args->embed && !args->embed[0]) {
        fprintf(stderr, "soadyn %s: --embed needs a value: all, none or constraint names\n", cmd);
        return CLI_USAGE;
    }
    sd_embed_options eo;
    sd_embed_options_init(&eo);
    eo.loops = args->embed;
    eo.independent = args->independent;
    eo.q = q;
    sd_error err = {0};
    sd_embedding *e = sd_embedding_new(model, &eo, &err);
    if (!e) {
        fprintf(stderr, "soadyn %s: %s\n", cmd, err.message[0] ? err.message : sd_status_name(err.status));
        return err.status == SD_E_ARGUMENT || err.status == SD_E_NOT_SUPPORTED ? CLI_USAGE
               : err.status == SD_E_MEMORY || err.status == SD_OK             ? CLI_FAILURE
                                                                              : CLI_MODEL;
    }
    int any = 0;
    for (int c = 0; c < sd_model_nconstraints(model); ++c) any |= sd_embedding_constraint_embedded(e, c) == 1;
    if (any) *embedding = e;
    else sd_embedding_free(e);
    return CLI_OK;
}

char *cli_embedded_speed_label(const sd_embedding *embedding, int i)
{
    return cli_label(sd_embedding_model(embedding), CLI_LIST_V, sd_embedding_speed_index(embedding, i));
}
