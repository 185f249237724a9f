/*
 * src/sim/csv.c — trajectories as CSV: one header line naming every column, one line per sample,
 * and, when a run did not complete, a last comment line "# truncated at t=... (why)". Numbers use
 * %.17g so they read back bit for bit. Joint names are written as given, whatever their length; a
 * name containing a comma or a quote is quoted (RFC 4180). The file is written beside its name and
 * renamed onto it when complete (output_file.h), so a file of that name never ends short.
 *
 * A model with flexible bodies gets three more columns per flexible body after the energies: the
 * translation of one of its nodes from its undeformed place, body axes (sd_model_node_deflection),
 * "<body>.node<N>.dx" .. ".dz"; the node is the last one (a beam's tip) unless the caller names
 * another (sd_csv_open_nodes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/flex.h>

#include "sim/output_file.h"
#include "sim/sim_internal.h"

struct sd_csv_writer {
    const sd_model *model;
    FILE *fp;
    sim_output_file file;
    double last_t;
    int nsamples;
    int write_errno; /* errno of the first failed write, 0: none yet */
    int ntip;        /* flexible bodies: their deflection columns, body tip_body[i], node tip_node[i] */
    int *tip_body, *tip_node;
};

static void writer_free(sd_csv_writer *w)
{
    free(w->tip_body);
    free(w->tip_node);
    free(w);
}

/* The node written for each flexible body: nodes[k] when given and >= 0, else the last node. */
static sd_status choose_nodes(sd_csv_writer *w, const char *path, const int *nodes, sd_error *err)
{
    const sd_model *m = w->model;
    const int n = sd_model_nbodies(m), nflex = sd_model_nflexible(m);
    if (nflex == 0) return SD_OK;
    w->tip_body = malloc(sizeof(int) * (size_t)nflex);
    w->tip_node = malloc(sizeof(int) * (size_t)nflex);
    if (!w->tip_body || !w->tip_node) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", path);
    for (int k = 0; k < n; ++k) {
        const int nn = sd_model_body_nnodes(m, k);
        if (sd_model_body_nmodes(m, k) == 0 && nn == 0) continue; /* rigid */
        const int t = nodes && nodes[k] >= 0 ? nodes[k] : nn - 1;
        if (t >= nn)
            return sd_error_set(err, SD_E_ARGUMENT, "%s: body %s has no node %d (nodes 0..%d)", path,
                                sd_model_body_name(m, k), t, nn - 1);
        w->tip_body[w->ntip] = k;
        w->tip_node[w->ntip++] = t;
    }
    return SD_OK;
}

/* Has a write failed? Remember the first failure's reason for sd_csv_close. */
static int write_failed(sd_csv_writer *w)
{
    if (ferror(w->fp) && w->write_errno == 0) w->write_errno = errno != 0 ? errno : EIO;
    return w->write_errno != 0;
}

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

/* A label as long as it is: a joint name has no length limit. NULL when out of memory. */
static char *state_label(const sd_model *model, int i, int speed)
{
    const int n = speed ? sd_speed_label(model, i, NULL, 0) : sd_coordinate_label(model, i, NULL, 0);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && speed) sd_speed_label(model, i, buf, (size_t)n + 1);
    else if (buf) sd_coordinate_label(model, i, buf, (size_t)n + 1);
    return buf;
}

static sd_status write_header(sd_csv_writer *w, sd_error *err)
{
    errno = 0;
    fputs("time", w->fp);
    const int nq = sd_model_nq(w->model), nv = sd_model_nv(w->model);
    for (int i = 0; i < nq + nv; ++i) {
        char *label = state_label(w->model, i < nq ? i : i - nq, i >= nq);
        if (!label) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory writing the header", w->file.path);
        put_field(w->fp, i < nq ? "" : "u.", label);
        free(label);
    }
    fputs(",kinetic,potential,total", w->fp);
    for (int i = 0; i < w->ntip; ++i) {
        const char *body = sd_model_body_name(w->model, w->tip_body[i]);
        for (int c = 0; c < 3; ++c) {
            char suffix[40];
            snprintf(suffix, sizeof(suffix), ".node%d.d%c", w->tip_node[i], "xyz"[c]);
            const size_t len = strlen(body) + strlen(suffix) + 1;
            char *name = malloc(len);
            if (!name) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory writing the header", w->file.path);
            snprintf(name, len, "%s%s", body, suffix);
            put_field(w->fp, "", name);
            free(name);
        }
    }
    fputc('\n', w->fp);
    if (write_failed(w))
        return sd_error_set(err, SD_E_IO, "%s: write failed: %s", w->file.path, strerror(w->write_errno));
    return SD_OK;
}

sd_status sd_csv_open(const sd_model *model, const char *path, sd_csv_writer **writer, sd_error *err)
{
    return sd_csv_open_nodes(model, path, NULL, writer, err);
}

sd_status sd_csv_open_nodes(const sd_model *model, const char *path, const int *nodes, sd_csv_writer **writer,
                            sd_error *err)
{
    if (!model || !path || !writer) return sd_error_set(err, SD_E_ARGUMENT, "sd_csv_open: NULL argument");
    *writer = NULL;
    sd_csv_writer *w = calloc(1, sizeof(*w));
    if (!w) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    w->model = model;
    sd_status st = choose_nodes(w, path, nodes, err);
    if (st == SD_OK) st = sim_output_begin(&w->file, path, err);
    if (st != SD_OK) {
        writer_free(w);
        return st;
    }
    w->fp = fopen(sim_output_write_path(&w->file), "w");
    if (!w->fp) {
        st = sd_error_set(err, SD_E_IO, "%s: cannot create: %s", w->file.path, strerror(errno));
        sim_output_abandon(&w->file);
        writer_free(w);
        return st;
    }
    st = write_header(w, err);
    if (st != SD_OK) {
        fclose(w->fp);
        sim_output_abandon(&w->file);
        writer_free(w);
        return st;
    }
    *writer = w;
    return SD_OK;
}

sd_status sd_csv_write(sd_csv_writer *w, const sd_sim_sample *s, sd_error *err)
{
    if (!w || !s) return sd_error_set(err, SD_E_ARGUMENT, "sd_csv_write: NULL argument");
    FILE *fp = w->fp;
    errno = 0;
    fprintf(fp, "%.17g", s->t);
    for (int i = 0; i < sd_model_nq(w->model); ++i) fprintf(fp, ",%.17g", s->q[i]);
    for (int i = 0; i < sd_model_nv(w->model); ++i) fprintf(fp, ",%.17g", s->u[i]);
    fprintf(fp, ",%.17g,%.17g,%.17g", s->kinetic, s->potential, s->kinetic + s->potential);
    for (int i = 0; i < w->ntip; ++i) {
        double d[6];
        sd_model_node_deflection(w->model, w->tip_body[i], w->tip_node[i], s->q, d, NULL); /* checked at open */
        fprintf(fp, ",%.17g,%.17g,%.17g", d[3], d[4], d[5]);
    }
    fputc('\n', fp);
    w->last_t = s->t;
    ++w->nsamples;
    if (write_failed(w))
        return sd_error_set(err, SD_E_IO, "%s: write failed: %s", w->file.path, strerror(w->write_errno));
    return SD_OK;
}

sd_status sd_csv_close(sd_csv_writer *w, const char *truncated_note, sd_error *err)
{
    if (!w) return SD_OK;
    errno = 0;
    if (truncated_note) fprintf(w->fp, "# truncated at t=%.17g (%s)\n", w->last_t, truncated_note);
    if (!write_failed(w) && fflush(w->fp) != 0) w->write_errno = errno != 0 ? errno : EIO;
    errno = 0;
    if (fclose(w->fp) != 0 && w->write_errno == 0) w->write_errno = errno != 0 ? errno : EIO;
    sd_status st = SD_OK;
    if (w->write_errno != 0) {
        st = sd_error_set(err, SD_E_IO, "%s: write failed: %s; %s", w->file.path, strerror(w->write_errno),
                          w->file.partial ? "the incomplete file was removed" : "the output is incomplete");
        sim_output_abandon(&w->file);
    } else {
        st = sim_output_commit(&w->file, err);
    }
    writer_free(w);
    return st;
}
