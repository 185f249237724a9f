/*
 * src/view/trajectory_csv.c — sd_trajectory_read_csv: a CSV trajectory written by sd_csv_open /
 * sd_simulate read back into an sd_trajectory, for the viewer (soadyn view --trajectory).
 *
 * The header names the columns (csv.c): time, the coordinates (sd_coordinate_label), the speeds
 * ("u." + sd_speed_label), kinetic, potential, total, and a flexible body's node deflections
 * ("BODY.nodeN.dx" ..). Columns are matched by name, not position, so a file of another model, or of
 * this one loaded another way (--floating), is refused naming the column that is missing or left
 * over. The deflections and the total energy are recomputed from q, so they are read past; a comment
 * line ("# truncated at t=...") ends nothing but itself. Every number must be finite and the time
 * must increase from line to line, else the line is named. Needs nothing beyond libc: always built.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/sim.h>

#include "internal.h"
#include "io/io_common.h"

/* One line of any length, without its end of line; NULL at the end of the file. *nul is set when
 * the line holds a NUL byte (the C string would end there, and what follows be ignored). */
static char *read_line(FILE *fp, char **buf, size_t *cap, int *nul)
{
    size_t n = 0;
    *nul = 0;
    int c;
    while ((c = fgetc(fp)) != EOF && c != '\n') {
        if (n + 2 > *cap) {
            const size_t cap2 = *cap ? 2 * *cap : 4096;
            char *b = realloc(*buf, cap2);
            if (!b) return NULL;
            *buf = b;
            *cap = cap2;
        }
        (*buf)[n++] = (char)c;
        if (c == '\0') *nul = 1;
    }
    if (c == EOF && n == 0) return NULL;
    if (!*buf) { /* an empty line before anything was allocated */
        *buf = malloc(1);
        if (!*buf) return NULL;
        *cap = 1;
    }
    if (n > 0 && (*buf)[n - 1] == '\r') --n;
    (*buf)[n] = '\0';
    return *buf;
}

/* The next header field (RFC 4180: a quoted field may hold commas, "" is a quote), unquoted in place;
 * *p moves past its comma. */
static char *next_field(char **p)
{
    char *s = *p, *out = s, *start = s;
    if (*s == '"') {
        ++s;
        while (*s) {
            if (*s == '"' && s[1] == '"') {
                *out++ = '"';
                s += 2;
            } else if (*s == '"') {
                ++s;
                break;
            } else {
                *out++ = *s++;
            }
        }
        while (*s && *s != ',') ++s;
    } else {
        while (*s && *s != ',') *out++ = *s++;
    }
    *p = *s == ',' ? s + 1 : s;
    *out = '\0';
    return start;
}

/* What a header column holds. */
enum { COL_SKIP = -1, COL_TIME = -2, COL_KINETIC = -3, COL_POTENTIAL = -4 };

typedef struct csv_read {
    const sd_model *m;
    const char *path;
    sd_error *err;
    int ncols;
    int *role;      /* per column: >= 0 its slot in [q | u], or COL_* */
    char **labels;  /* the model's q labels then "u." speed labels */
    long rows;      /* data lines read so far */
    double last_t;  /* the time of the last one */
} csv_read;

static sd_status make_labels(csv_read *r)
{
    const int nq = sd_model_nq(r->m), nv = sd_model_nv(r->m);
    r->labels = calloc((size_t)(nq + nv) + 1, sizeof(char *));
    if (!r->labels) return sd_error_set(r->err, SD_E_MEMORY, "%s: out of memory", r->path);
    for (int i = 0; i < nq + nv; ++i) {
        const int speed = i >= nq, j = speed ? i - nq : i;
        const int len = speed ? sd_speed_label(r->m, j, NULL, 0) : sd_coordinate_label(r->m, j, NULL, 0);
        r->labels[i] = malloc((size_t)len + 3);
        if (!r->labels[i]) return sd_error_set(r->err, SD_E_MEMORY, "%s: out of memory", r->path);
        if (speed) {
            memcpy(r->labels[i], "u.", 2);
            sd_speed_label(r->m, j, r->labels[i] + 2, (size_t)len + 1);
        } else {
            sd_coordinate_label(r->m, j, r->labels[i], (size_t)len + 1);
        }
    }
    return SD_OK;
}

/* A flexible body's deflection column "BODY.nodeN.dx|dy|dz", recomputed from q: read past. */
static int is_deflection(const char *name)
{
    const size_t n = strlen(name);
    return strstr(name, ".node") && n > 3 && name[n - 3] == '.' && name[n - 2] == 'd' &&
           (name[n - 1] == 'x' || name[n - 1] == 'y' || name[n - 1] == 'z');
}

static sd_status read_header(csv_read *r, char *line)
{
    const int nq = sd_model_nq(r->m), nv = sd_model_nv(r->m);
    int cap = 16;
    r->role = malloc(sizeof(int) * (size_t)cap);
    unsigned char *seen = calloc((size_t)(nq + nv) + 1, 1);
    sd_status st = r->role && seen ? SD_OK : sd_error_set(r->err, SD_E_MEMORY, "%s: out of memory", r->path);
    char *p = line;
    int has_time = 0;
    while (st == SD_OK && (*p || r->ncols == 0)) {
        const char *name = next_field(&p);
        if (r->ncols == cap) {
            int *role = realloc(r->role, sizeof(int) * (size_t)(cap *= 2));
            if (!role) {
                st = sd_error_set(r->err, SD_E_MEMORY, "%s: out of memory", r->path);
                break;
            }
            r->role = role;
        }
        int role = COL_SKIP;
        if (strcmp(name, "time") == 0) role = COL_TIME, has_time = 1;
        else if (strcmp(name, "kinetic") == 0) role = COL_KINETIC;
        else if (strcmp(name, "potential") == 0) role = COL_POTENTIAL;
        else if (strcmp(name, "total") == 0 || is_deflection(name)) role = COL_SKIP;
        else {
            int i = 0;
            while (i < nq + nv && strcmp(r->labels[i], name) != 0) ++i;
            if (i == nq + nv || seen[i])
                st = sd_io_fail(r->err, SD_E_PARSE, r->path, 1,
                                "column %d '%s' is %s of model %s (a trajectory of another model, or loaded "
                                "another way: --floating, --keep-fixed?)", r->ncols + 1, name,
                                i == nq + nv ? "no coordinate or speed" : "a second column", sd_model_name(r->m));
            else role = i, seen[i] = 1;
        }
        r->role[r->ncols++] = role;
    }
    if (st == SD_OK && !has_time) st = sd_io_fail(r->err, SD_E_PARSE, r->path, 1, "no 'time' column");
    for (int i = 0; st == SD_OK && i < nq + nv; ++i)
        if (!seen[i])
            st = sd_io_fail(r->err, SD_E_PARSE, r->path, 1, "no column '%s' (%s %d of model %s)", r->labels[i],
                            i < nq ? "coordinate" : "speed", i < nq ? i : i - nq, sd_model_name(r->m));
    free(seen);
    return st;
}

static sd_status read_row(csv_read *r, char *line, long lineno, double *q, double *u, sd_sim_sample *s)
{
    const int nq = sd_model_nq(r->m);
    char *p = line;
    for (int c = 0; c < r->ncols; ++c) {
        char *end;
        errno = 0;
        const double x = strtod(p, &end);
        if (end == p || (*end && *end != ',') || errno == ERANGE)
            return sd_io_fail(r->err, SD_E_PARSE, r->path, (int)lineno, "column %d: not a number%s", c + 1,
                              *p ? "" : " (the line ends early)");
        if (!isfinite(x)) /* a NaN would reach the page as null, an infinity as nonsense */
            return sd_io_fail(r->err, SD_E_PARSE, r->path, (int)lineno, "column %d: '%.*s' is not finite", c + 1,
                              (int)(end - p < 40 ? end - p : 40), p);
        const int role = r->role[c];
        if (role >= 0 && role < nq) q[role] = x;
        else if (role >= nq) u[role - nq] = x;
        else if (role == COL_TIME) s->t = x;
        else if (role == COL_KINETIC) s->kinetic = x;
        else if (role == COL_POTENTIAL) s->potential = x;
        p = *end ? end + 1 : end;
        if (c + 1 < r->ncols && !*end)
            return sd_io_fail(r->err, SD_E_PARSE, r->path, (int)lineno, "%d columns, the header has %d", c + 1,
                              r->ncols);
    }
    if (*p) return sd_io_fail(r->err, SD_E_PARSE, r->path, (int)lineno, "more columns than the header's %d", r->ncols);
    /* the player interpolates between samples by time: it must increase line after line */
    if (r->rows > 0 && !(s->t > r->last_t))
        return sd_io_fail(r->err, SD_E_PARSE, r->path, (int)lineno,
                          "time %.17g does not increase (the previous sample's is %.17g)", s->t, r->last_t);
    r->rows++;
    r->last_t = s->t;
    return SD_OK;
}

sd_status sd_trajectory_read_csv(const sd_model *model, const char *path, sd_trajectory **trajectory, sd_error *err)
{
    if (trajectory) *trajectory = NULL;
    if (!model || !path || !trajectory) return sd_error_set(err, SD_E_ARGUMENT, "sd_trajectory_read_csv: NULL argument");
    FILE *fp = fopen(path, "r");
    if (!fp) return sd_error_set(err, SD_E_IO, "%s: cannot open: %s", path, strerror(errno));
    csv_read r = {model, path, err, 0, NULL, NULL, 0, 0.0};
    const int nq = sd_model_nq(model), nv = sd_model_nv(model);
    double *q = calloc((size_t)nq + 1, sizeof(double)), *u = calloc((size_t)nv + 1, sizeof(double));
    sd_trajectory *tr = sd_trajectory_new(model);
    char *buf = NULL;
    size_t cap = 0;
    sd_status st = q && u && tr ? make_labels(&r) : sd_error_set(err, SD_E_MEMORY, "%s: out of memory", path);
    int nul = 0;
    char *line = st == SD_OK ? read_line(fp, &buf, &cap, &nul) : NULL;
    if (st == SD_OK && !line) st = sd_io_fail(err, SD_E_PARSE, path, 1, "empty: no header line");
    if (st == SD_OK && nul) st = sd_io_fail(err, SD_E_PARSE, path, 1, "holds a NUL byte: not a CSV text line");
    if (st == SD_OK) st = read_header(&r, line);
    for (long lineno = 2; st == SD_OK && (line = read_line(fp, &buf, &cap, &nul)) != NULL; ++lineno) {
        if (nul) {
            st = sd_io_fail(err, SD_E_PARSE, path, (int)lineno, "holds a NUL byte: not a CSV text line");
            break;
        }
        if (line[0] == '#' || line[0] == '\0') continue;
        sd_sim_sample s = {0};
        s.q = q;
        s.u = u;
        st = read_row(&r, line, lineno, q, u, &s);
        if (st == SD_OK && sd_trajectory_append(tr, &s) != SD_OK)
            st = sd_error_set(err, SD_E_MEMORY, "%s:%ld: out of memory", path, lineno);
    }
    if (st == SD_OK && ferror(fp)) st = sd_error_set(err, SD_E_IO, "%s: read error", path);
    if (st == SD_OK && sd_trajectory_length(tr) == 0) st = sd_io_fail(err, SD_E_PARSE, path, 2, "no samples");
    fclose(fp);
    if (r.labels)
        for (int i = 0; i < nq + nv; ++i) free(r.labels[i]);
    free(r.labels);
    free(r.role);
    free(buf);
    free(q);
    free(u);
    if (st != SD_OK) {
        sd_trajectory_free(tr);
        return st;
    }
    *trajectory = tr;
    return SD_OK;
}
