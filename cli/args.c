/*
 * cli/args.c — option parsing and value lists (--q 0.1,0.2 or --q shoulder=0.3,elbow=-1.2).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_double(const char *text, double *out)
{
    if (!text || !*text) return 1;
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v)) return 1;
    *out = v;
    return 0;
}

int cli_parse_long(const char *text, long *out)
{
    if (!text || !*text) return 1;
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (*end != '\0' || errno == ERANGE) return 1;
    *out = v;
    return 0;
}

static const cli_option *find_option(const cli_option *options, const char *name, size_t len)
{
    for (const cli_option *o = options; o->name; ++o)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    return NULL;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_option *options, const char *help,
              const char **positional)
{
    *positional = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout); /* checked when main closes stdout (cli_output_close) */
            return CLI_OK;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (*positional) {
                fprintf(stderr, "soadyn %s: unexpected argument '%s' (one model only)\n", cmd, a);
                return CLI_USAGE;
            }
            *positional = a;
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        const cli_option *o = find_option(options, name, eq ? (size_t)(eq - name) : strlen(name));
        if (!o) {
            fprintf(stderr, "soadyn %s: unknown option '%s' (see soadyn %s --help)\n", cmd, a, cmd);
            return CLI_USAGE;
        }
        if (!o->takes_value) {
            if (eq) {
                fprintf(stderr, "soadyn %s: option --%s takes no value\n", cmd, o->name);
                return CLI_USAGE;
            }
            *o->flag = 1;
        } else if (!eq && i + 1 >= argc) {
            fprintf(stderr, "soadyn %s: option --%s needs a value\n", cmd, o->name);
            return CLI_USAGE;
        } else {
            const char *value = eq ? eq + 1 : argv[++i];
            if (*o->value) { /* the last one winning silently would hide a typo in a long command */
                fprintf(stderr, "soadyn %s: option --%s given twice ('%s', then '%s')\n", cmd, o->name, *o->value,
                        value);
                return CLI_USAGE;
            }
            *o->value = value;
        }
    }
    if (!*positional) {
        fprintf(stderr, "soadyn %s: no model given (see soadyn %s --help)\n", cmd, cmd);
        return CLI_USAGE;
    }
    return -1;
}

char *cli_label(const sd_model *model, cli_list_kind kind, int i)
{
    const int n = kind == CLI_LIST_Q ? sd_coordinate_label(model, i, NULL, 0) : sd_speed_label(model, i, NULL, 0);
    char *label = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (label && kind == CLI_LIST_Q) sd_coordinate_label(model, i, label, (size_t)n + 1);
    else if (label) sd_speed_label(model, i, label, (size_t)n + 1);
    return label;
}

/* Set entries whose label is `name` (or, for a bare joint name, all entries of that joint), marking
 * them in `set`. Returns how many were set, -1 when out of memory, or -2 (nothing set) when one of
 * them was set already by an earlier item of the list. */
static int set_by_name(const sd_model *model, cli_list_kind kind, const char *name, double value,
                       double *out, unsigned char *given, unsigned char *set)
{
    const int n = kind == CLI_LIST_Q ? sd_model_nq(model) : sd_model_nv(model);
    int hits = 0;
    for (int i = 0; i < n; ++i) {
        char *label = cli_label(model, kind, i);
        if (!label) return -1;
        const size_t len = strlen(name);
        /* "ball" matches "ball" and "ball.wx": a joint name sets each of its entries */
        if (strcmp(label, name) == 0 || (strncmp(label, name, len) == 0 && label[len] == '.' &&
                                         sd_model_joint_index(model, name) >= 0)) {
            if (set[i]) {
                free(label);
                return -2;
            }
            set[i] = 1;
            out[i] = value;
            if (given) given[i] = 1;
            ++hits;
        }
        free(label);
    }
    return hits;
}

static int parse_named(const sd_model *model, const char *option, char *list, cli_list_kind kind,
                       double *out, unsigned char *given)
{
    const int n = kind == CLI_LIST_Q ? sd_model_nq(model) : sd_model_nv(model);
    unsigned char *set = calloc((size_t)n + 1, 1); /* entries an earlier item set: a second is refused */
    if (!set) {
        fprintf(stderr, "soadyn: --%s: out of memory\n", option);
        return 1;
    }
    int bad = 0;
    for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
        char *eq = strchr(item, '=');
        double v;
        if (!eq) {
            fprintf(stderr, "soadyn: --%s: '%s' is not NAME=VALUE (do not mix the two forms)\n", option, item);
            bad = 1;
            continue;
        }
        *eq = '\0';
        if (cli_parse_double(eq + 1, &v)) {
            fprintf(stderr, "soadyn: --%s: '%s' is not a number (for %s)\n", option, eq + 1, item);
            bad = 1;
        } else {
            const int hits = set_by_name(model, kind, item, v, out, given, set);
            if (hits == -1) {
                fprintf(stderr, "soadyn: --%s: out of memory\n", option);
                free(set);
                return 1;
            }
            if (hits == -2) {
                fprintf(stderr, "soadyn: --%s: '%s' is given twice (or also through its joint's name)\n", option,
                        item);
                bad = 1;
            }
            if (hits == 0) {
                fprintf(stderr, "soadyn: --%s: unknown %s name '%s'\n", option,
                        kind == CLI_LIST_Q ? "joint coordinate" : "joint speed", item);
                bad = 1;
            }
        }
    }
    free(set);
    return bad;
}

static int parse_full(const char *option, char *list, int n, double *out, unsigned char *given)
{
    int count = 0;
    for (char *p = list;; ++count) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        double v;
        if (cli_parse_double(p, &v)) {
            fprintf(stderr, "soadyn: --%s: '%s' is not a number\n", option, p);
            return 1;
        }
        if (count < n) {
            out[count] = v;
            if (given) given[count] = 1;
        }
        if (!comma) break;
        p = comma + 1;
    }
    if (count + 1 != n) {
        fprintf(stderr, "soadyn: --%s: %d values given, the model has %d\n", option, count + 1, n);
        return 1;
    }
    return 0;
}

int cli_parse_values(const sd_model *model, const char *option, const char *text, cli_list_kind kind,
                     double *out, unsigned char *given)
{
    const int n = kind == CLI_LIST_Q ? sd_model_nq(model) : sd_model_nv(model);
    char *list = malloc(strlen(text) + 1);
    if (!list) {
        fprintf(stderr, "soadyn: --%s: out of memory\n", option);
        return 1;
    }
    strcpy(list, text);
    const int bad = strchr(list, '=') ? parse_named(model, option, list, kind, out, given)
                                      : parse_full(option, list, n, out, given);
    free(list);
    return bad;
}
