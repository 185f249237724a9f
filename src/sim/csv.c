/*
 * src/sim/csv.c — trajectories as CSV: one header line naming every column, one line per sample,
 * and, when a run did not complete, a last comment line "# truncated at t=... (why)". Numbers use
 * %.17g so they read back bit for bit. Joint names are written as given; a name containing a comma
 * or a quote is quoted (RFC 4180).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

struct sd_csv_writer {
    const sd_model *model;
    FILE *fp;
    char *path;
    double last_t;
    int nsamples;
};

/* Write one header field, quoting it when it needs to be. */
static void put_field(FILE *fp, const char *prefix, const char *name)
{
    if (strpbrk(name, ",\"\n\r")) {
        fprintf(fp, ",\"%s", prefix);
        for (const char *c = name; *c; ++c) {
            if (*c == '"') fputc('"', fp);
            fputc(*c, fp);
        }
        fputc('"', fp);
    } else {
        fprintf(fp, ",%s%s", prefix, name);
    }
}

static void write_header(sd_csv_writer *w)
{
    char buf[512];
    fputs("time", w->fp);
    for (int i = 0; i < sd_model_nq(w->model); ++i) {
        sd_coordinate_label(w->model, i, buf, sizeof(buf));
        put_field(w->fp, "", buf);
    }
    for (int i = 0; i < sd_model_nv(w->model); ++i) {
        sd_speed_label(w->model, i, buf, sizeof(buf));
        put_field(w->fp, "u.", buf);
    }
    fputs(",kinetic,potential,total\n", w->fp);
}

sd_status sd_csv_open(const sd_model *model, const char *path, sd_csv_writer **writer, sd_error *err)
{
    if (!model || !path || !writer) return sd_error_set(err, SD_E_ARGUMENT, "sd_csv_open: NULL argument");
    *writer = NULL;
    sd_csv_writer *w = calloc(1, sizeof(*w));
    if (!w) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    w->model = model;
    w->fp = fopen(path, "w");
    if (!w->fp) {
        sd_status st = sd_error_set(err, SD_E_IO, "%s: cannot create: %s", path, strerror(errno));
        free(w);
        return st;
    }
    w->path = malloc(strlen(path) + 1);
    if (w->path) strcpy(w->path, path);
    write_header(w);
    *writer = w;
    return SD_OK;
}

sd_status sd_csv_write(sd_csv_writer *w, const sd_sim_sample *s, sd_error *err)
{
    if (!w || !s) return sd_error_set(err, SD_E_ARGUMENT, "sd_csv_write: NULL argument");
    FILE *fp = w->fp;
    fprintf(fp, "%.17g", s->t);
    for (int i = 0; i < sd_model_nq(w->model); ++i) fprintf(fp, ",%.17g", s->q[i]);
    for (int i = 0; i < sd_model_nv(w->model); ++i) fprintf(fp, ",%.17g", s->u[i]);
    fprintf(fp, ",%.17g,%.17g,%.17g\n", s->kinetic, s->potential, s->kinetic + s->potential);
    w->last_t = s->t;
    ++w->nsamples;
    if (ferror(fp))
        return sd_error_set(err, SD_E_IO, "%s: write failed: %s", w->path ? w->path : "CSV", strerror(errno));
    return SD_OK;
}

sd_status sd_csv_close(sd_csv_writer *w, const char *truncated_note, sd_error *err)
{
    if (!w) return SD_OK;
    if (truncated_note) fprintf(w->fp, "# truncated at t=%.17g (%s)\n", w->last_t, truncated_note);
    const int bad = ferror(w->fp) | fflush(w->fp);
    const int saved = errno;
    const int bad_close = fclose(w->fp);
    sd_status st = SD_OK;
    if (bad || bad_close)
        st = sd_error_set(err, SD_E_IO, "%s: write failed: %s", w->path ? w->path : "CSV",
                          strerror(bad ? saved : errno));
    free(w->path);
    free(w);
    return st;
}
