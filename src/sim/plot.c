/*
 * src/sim/plot.c — a trajectory as a picture, with PLplot: top panel every joint coordinate against
 * time, then kinetic, potential and total energy, each with a legend; a model with flexible bodies
 * gets a third panel, the deflection of one node of each flexible body (its translation in body
 * axes, sd_model_node_deflection: the components that move).
 *
 * PLplot exits the process on fatal errors, so everything that could make it fail is checked
 * first: the device must be compiled in (plgFileDevs) and the file writable. Each call uses a
 * fresh PLplot stream (plmkstrm / plend1), so plots do not disturb one another. PLplot does not
 * report write errors either: the picture is drawn beside its name (output_file.h), and only a file
 * that ends as a whole PNG or SVG file ends is renamed onto the name asked for.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <plplot.h>

#include <soadyn/flex.h>

#include "sim/output_file.h"
#include "sim/sim_trajectory.h"

#define MAX_POINTS 20000  /* more points than pixels only makes files big */
#define NCOLORS 10

/* Tableau-10 colours, cmap0 entries 2..11 (0 is the background, 1 the axes). */
static const int palette[NCOLORS][3] = {
    {31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};

/* The PLplot device for a file name: "pngcairo", "svgcairo", or NULL. */
static const char *device_for(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return NULL;
    if (strcmp(dot, ".png") == 0 || strcmp(dot, ".PNG") == 0) return "pngcairo";
    if (strcmp(dot, ".svg") == 0 || strcmp(dot, ".SVG") == 0) return "svgcairo";
    return NULL;
}

static int device_available(const char *device)
{
    int ndev = 64, found = 0;
    const char **menu = malloc(sizeof(char *) * 64), **names = malloc(sizeof(char *) * 64);
    if (menu && names) {
        plgFileDevs(&menu, &names, &ndev);
        for (int i = 0; i < ndev; ++i)
            if (strcmp(names[i], device) == 0) found = 1;
    }
    free(menu);
    free(names);
    return found;
}

/* Range of y over the plotted rows, widened a little, and never empty. */
static void y_range(const double *y, size_t n, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        if (y[i] < a) a = y[i];
        if (y[i] > b) b = y[i];
    }
    if (!(a <= b)) { a = -1.0; b = 1.0; }
    double pad = 0.05 * (b - a);
    const double scale = fmax(fabs(a), fabs(b));
    if (pad < 1e-9 * scale || pad == 0.0) pad = scale > 0.0 ? 1e-3 * scale : 1.0;
    *lo = a - pad;
    *hi = b + pad;
}

/* Column c of the trajectory (0: time) at every `step`-th row into out. */
static size_t column(const sd_trajectory *tr, size_t c, size_t step, double *out)
{
    size_t m = 0;
    for (size_t i = 0; i < tr->n; i += step) out[m++] = tr->rows[i * tr->stride + c];
    if ((tr->n - 1) % step != 0) out[m++] = tr->rows[(tr->n - 1) * tr->stride + c]; /* keep the end */
    return m;
}

static void set_colors(void)
{
    plscmap0n(16);
    plscol0(0, 255, 255, 255);
    plscol0(1, 0, 0, 0);
    for (int i = 0; i < NCOLORS; ++i) plscol0(2 + i, palette[i][0], palette[i][1], palette[i][2]);
}

/* Many coordinates: a legend of several columns, and narrower panels to make room for it. */
static int legend_columns(int nlines)
{
    return nlines > 24 ? 3 : nlines > 10 ? 2 : 1;
}

/* One panel: lines ys[j] (m points each) against x, with a legend of `labels`. */
static void panel(const double *x, size_t m, double *const *ys, int nlines, const char *const *labels,
                  const char *ylabel, const char *title, double vp_right)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < nlines; ++j) {
        double a, b;
        y_range(ys[j], m, &a, &b);
        lo = fmin(lo, a);
        hi = fmax(hi, b);
    }
    const int ncol = legend_columns(nlines), nrow = (nlines + ncol - 1) / ncol;
    pladv(0);
    plvpor(0.09, vp_right, 0.17, 0.88);
    plwind(x[0], x[m - 1] > x[0] ? x[m - 1] : x[0] + 1.0, lo, hi);
    plcol0(1);
    plwidth(1.0);
    plbox("bcnst", 0.0, 0, "bcnstv", 0.0, 0);
    pllab("time (s)", ylabel, title);
    PLINT *opts = malloc(sizeof(PLINT) * (size_t)nlines * 4), *colors = opts + nlines, *styles = colors + nlines;
    PLINT *text_colors = styles + nlines;
    PLFLT *widths = malloc(sizeof(PLFLT) * (size_t)nlines);
    if (!opts || !widths) { free(opts); free(widths); return; }
    for (int j = 0; j < nlines; ++j) {
        colors[j] = 2 + j % NCOLORS;
        styles[j] = 1 + (j / NCOLORS) % 8; /* past ten lines, dashes tell them apart */
        widths[j] = 1.5;
        opts[j] = PL_LEGEND_LINE;
        text_colors[j] = 1;
        plcol0(colors[j]);
        pllsty(styles[j]);
        plwidth(widths[j]);
        plline((PLINT)m, x, ys[j]);
    }
    pllsty(1);
    plwidth(1.0);
    PLFLT lw, lh;
    const double text_scale = nrow > 6 ? 0.55 : 0.75;
    pllegend(&lw, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.01, 0.0, 0.05, 0, 1, 1, nrow, ncol,
             nlines, opts, 0.6, text_scale, nrow > 6 ? 1.5 : 1.8, 0.0, text_colors, labels, NULL, NULL, NULL, NULL, colors, styles, widths, NULL, NULL,
             NULL, NULL);
    free(opts);
    free(widths);
}

/* The third panel: node deflections of the flexible bodies, computed from q at the plotted rows (the
 * rows column() takes); components that stay exactly zero (a beam's axial one, a plane without
 * modes) are left out. */
static sd_status draw_deflection(const sd_trajectory *tr, size_t step, const double *x, size_t m, double right)
{
    const int nmax = 3 * tr->ntip;
    double *buf = malloc(sizeof(double) * m * (size_t)nmax);
    double **ys = malloc(sizeof(double *) * (size_t)nmax);
    char **labels = calloc((size_t)nmax, sizeof(char *));
    sd_status st = buf && ys && labels ? SD_OK : SD_E_MEMORY;
    int nlines = 0;
    for (int i = 0; st == SD_OK && i < tr->ntip; ++i) {
        double *col[3] = {buf + m * (size_t)(3 * i), buf + m * (size_t)(3 * i + 1), buf + m * (size_t)(3 * i + 2)};
        size_t r = 0, row = 0;
        for (; row < tr->n; row += step) {
            double d[6];
            sd_model_node_deflection(tr->model, tr->tip_body[i], tr->tip_node[i], tr->rows + row * tr->stride + 1, d,
                                     NULL);
            for (int c = 0; c < 3; ++c) col[c][r] = d[3 + c];
            ++r;
        }
        if ((tr->n - 1) % step != 0) { /* the last row, as column() keeps it */
            double d[6];
            sd_model_node_deflection(tr->model, tr->tip_body[i], tr->tip_node[i],
                                     tr->rows + (tr->n - 1) * tr->stride + 1, d, NULL);
            for (int c = 0; c < 3; ++c) col[c][r] = d[3 + c];
        }
        for (int c = 0; c < 3 && st == SD_OK; ++c) {
            int moves = 0;
            for (size_t j = 0; j < m && !moves; ++j) moves = col[c][j] != 0.0;
            if (!moves) continue;
            const char *body = sd_model_body_name(tr->model, tr->tip_body[i]);
            const size_t len = strlen(body) + 32;
            labels[nlines] = malloc(len);
            if (!labels[nlines]) {
                st = SD_E_MEMORY;
                break;
            }
            snprintf(labels[nlines], len, "%s.node%d.d%c", body, tr->tip_node[i], "xyz"[c]);
            ys[nlines++] = col[c];
        }
    }
    if (st == SD_OK) {
        char title[160];
        snprintf(title, sizeof(title), "node deflection of the flexible bodies (body axes)");
        if (nlines > 0)
            panel(x, m, ys, nlines, (const char *const *)labels, "deflection (m)", title, right);
        else
            pladv(0);
    }
    for (int j = 0; labels && j < nmax; ++j) free(labels[j]);
    free(labels);
    free(ys);
    free(buf);
    return st;
}

/* Build the arrays and draw both panels (the stream is open). */
static sd_status draw(const sd_trajectory *tr, size_t step)
{
    const int nq = tr->nq, nlines = nq > 0 ? nq : 0;
    const size_t mcap = tr->n / step + 2;
    double *buf = malloc(sizeof(double) * mcap * (size_t)(nq + 4));
    double **ys = malloc(sizeof(double *) * (size_t)(nq + 3));
    char **labels = calloc((size_t)nq + 3, sizeof(char *));
    sd_status st = buf && ys && labels ? SD_OK : SD_E_MEMORY;
    size_t m = 0;
    for (int j = 0; st == SD_OK && j < nq + 3; ++j) {
        ys[j] = buf + mcap * (size_t)(j + 1);
        const int len = j < nq ? sd_coordinate_label(tr->model, j, NULL, 0) : 16; /* names: any length */
        labels[j] = len >= 0 ? malloc((size_t)len + 1) : NULL;
        if (!labels[j]) st = SD_E_MEMORY;
        else if (j < nq) sd_coordinate_label(tr->model, j, labels[j], (size_t)len + 1);
    }
    if (st == SD_OK) {
        m = column(tr, 0, step, buf);
        for (int j = 0; j < nq; ++j) column(tr, (size_t)j + 1, step, ys[j]);
        column(tr, (size_t)nq + 1, step, ys[nq]);     /* kinetic */
        column(tr, (size_t)nq + 2, step, ys[nq + 1]); /* potential */
        for (size_t i = 0; i < m; ++i) ys[nq + 2][i] = ys[nq][i] + ys[nq + 1][i];
        snprintf(labels[nq], 16, "kinetic");
        snprintf(labels[nq + 1], 16, "potential");
        snprintf(labels[nq + 2], 16, "total");
        char title[400];
        /* an incomplete run says so where the eye lands first */
        snprintf(title, sizeof(title), "%s: joint positions%s%s%s", sd_model_name(tr->model),
                 tr->note[0] ? " [" : "", tr->note, tr->note[0] ? "]" : "");
        const int ncol = legend_columns(nlines);
        const double right = ncol == 1 ? 0.80 : ncol == 2 ? 0.62 : 0.52; /* same for both: time axes align */
        if (nlines > 0)
            panel(buf, m, ys, nlines, (const char *const *)labels, "position (rad or m)", title, right);
        else
            pladv(0);
        char energy_title[200];
        snprintf(energy_title, sizeof(energy_title), "energy%s%s%s", nlines == 0 && tr->note[0] ? " [" : "",
                 nlines == 0 ? tr->note : "", nlines == 0 && tr->note[0] ? "]" : "");
        panel(buf, m, ys + nq, 3, (const char *const *)(labels + nq), "energy (J)", energy_title, right);
        if (tr->ntip > 0) st = draw_deflection(tr, step, buf, m, right);
    }
    for (int j = 0; labels && j < nq + 3; ++j) free(labels[j]);
    free(labels);
    free(ys);
    free(buf);
    return st;
}

/* Does the file end as a whole picture of its kind ends? A PNG ends with its IEND chunk (length 0,
 * type, CRC), an SVG with its closing tag. A write that failed part-way leaves neither. */
static int picture_is_whole(const char *path, const char *device)
{
    static const unsigned char png_end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    unsigned char tail[64];
    size_t n = 0;
    if (fseek(fp, -(long)sizeof(tail), SEEK_END) != 0) rewind(fp); /* a file shorter than the tail */
    n = fread(tail, 1, sizeof(tail), fp);
    fclose(fp);
    if (strcmp(device, "pngcairo") == 0) return n >= sizeof(png_end) && memcmp(tail + n - 12, png_end, 12) == 0;
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' ')) --n;
    return n >= 6 && memcmp(tail + n - 6, "</svg>", 6) == 0;
}

sd_status sd_plot_trajectory(const sd_trajectory *tr, const char *path, sd_error *err)
{
    if (!tr || !path) return sd_error_set(err, SD_E_ARGUMENT, "sd_plot_trajectory: NULL argument");
    const char *device = device_for(path);
    if (!device)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: plot file name must end in .png or .svg", path);
    if (!device_available(device))
        return sd_error_set(err, SD_E_NOT_SUPPORTED, "%s: PLplot device %s is not installed", path, device);
    if (tr->n < 1) return sd_error_set(err, SD_E_ARGUMENT, "%s: no samples to plot", path);
    sim_output_file file;
    sd_status st = sim_output_begin(&file, path, err);
    if (st != SD_OK) return st;
    FILE *probe = fopen(sim_output_write_path(&file), "wb"); /* PLplot would exit() on an unwritable file */
    if (!probe) {
        st = sd_error_set(err, SD_E_IO, "%s: cannot create: %s", path, strerror(errno));
        sim_output_abandon(&file);
        return st;
    }
    fclose(probe);

    PLINT old_stream, stream;
    plgstrm(&old_stream);
    plmkstrm(&stream);
    plsdev(device);
    plsfnam(sim_output_write_path(&file));
    plspage(0.0, 0.0, 1200, tr->ntip > 0 ? 1300 : 900, 0, 0);
    set_colors();
    plssub(1, tr->ntip > 0 ? 3 : 2);
    plinit();
    const size_t step = tr->n > MAX_POINTS ? (tr->n + MAX_POINTS - 1) / MAX_POINTS : 1;
    st = draw(tr, step);
    plend1();
    plsstrm(old_stream);
    if (st != SD_OK) {
        sim_output_abandon(&file);
        return sd_error_set(err, st, "%s: out of memory while plotting", path);
    }
    if (file.partial && !picture_is_whole(file.partial, device)) { /* a stream written in place cannot be read back */
        sim_output_abandon(&file);
        return sd_error_set(err, SD_E_IO, "%s: the picture was not written whole (disk full or a file size "
                                          "limit?); no file written",
                            path);
    }
    return sim_output_commit(&file, err);
}
