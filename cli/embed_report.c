/*
 * cli/embed_report.c — the embedding as `soadyn info` and `soadyn eval` print it (embed_report.h).
 * Everything is read through the public queries (sd_embedding_*) and the library's own paragraph
 * (sd_embedding_describe); the split's condition number cond(Y1) comes from closing the loops once
 * at the configuration given (sd_embedded_close, then sd_embedded_split_condition).
 */
#include <stdlib.h>

#include <soadyn/flex.h>

#include "embed_report.h"

/* Everything about one aggregate, gathered once for both outputs. */
typedef struct agg_info {
    int nb, nc, nt, ni;
    int *bodies, *cons, *tree, *ind; /* tree: its tree speeds, ascending; ind: the independent ones */
    unsigned char *is_ind;           /* per tree speed of the model: independent in this aggregate */
    int parent;
} agg_info;

static void agg_free(agg_info *a)
{
    free(a->bodies);
    free(a->cons);
    free(a->tree);
    free(a->ind);
    free(a->is_ind);
}

static int agg_get(const sd_embedding *e, int a, agg_info *g)
{
    const sd_model *m = sd_embedding_model(e);
    const int nv = sd_model_nv(m);
    g->nb = sd_embedding_aggregate_bodies(e, a, NULL);
    g->nc = sd_embedding_aggregate_constraints(e, a, NULL);
    g->ni = sd_embedding_aggregate_independent(e, a, NULL);
    g->parent = sd_embedding_aggregate_parent(e, a);
    g->bodies = malloc(sizeof(int) * (size_t)(g->nb > 0 ? g->nb : 1));
    g->cons = malloc(sizeof(int) * (size_t)(g->nc > 0 ? g->nc : 1));
    g->ind = malloc(sizeof(int) * (size_t)(g->ni > 0 ? g->ni : 1));
    g->tree = malloc(sizeof(int) * (size_t)(nv > 0 ? nv : 1));
    g->is_ind = calloc((size_t)(nv > 0 ? nv : 1), 1);
    if (!g->bodies || !g->cons || !g->ind || !g->tree || !g->is_ind) return 0;
    sd_embedding_aggregate_bodies(e, a, g->bodies);
    sd_embedding_aggregate_constraints(e, a, g->cons);
    sd_embedding_aggregate_independent(e, a, g->ind);
    for (int i = 0; i < g->ni; ++i)
        if (g->ind[i] >= 0 && g->ind[i] < nv) g->is_ind[g->ind[i]] = 1;
    g->nt = 0;
    for (int j = 0; j < g->nb; ++j) { /* the bodies' hinge speeds, then a flexible member's modal speeds */
        const int k = g->bodies[j];
        for (int i = 0; i < sd_model_hinge_nv(m, k); ++i) g->tree[g->nt++] = sd_model_v_index(m, k) + i;
        for (int i = 0; i < sd_model_body_nmodes(m, k); ++i) g->tree[g->nt++] = sd_model_mode_v_index(m, k) + i;
    }
    return 1;
}

/* cond(Y1) of every aggregate at q (NULL when q is NULL or the loops do not close from it). */
static double *split_conditions(const sd_embedding *e, const double *q)
{
    const int na = sd_embedding_naggregates(e);
    if (!q || na == 0) return NULL;
    const sd_model *m = sd_embedding_model(e);
    sd_embedded_data *ed = sd_embedded_data_new(e);
    double *cond = malloc(sizeof(double) * (size_t)na), *qc = malloc(sizeof(double) * (size_t)(sd_model_nq(m) + 1));
    if (ed && cond && qc && sd_embedded_close(e, ed, q, qc, NULL) == SD_OK) {
        for (int a = 0; a < na; ++a) cond[a] = sd_embedded_split_condition(ed, a);
    } else {
        free(cond);
        cond = NULL;
    }
    free(qc);
    sd_embedded_data_free(ed);
    return cond;
}

static const char *body_name(const sd_model *m, int k) { return k < 0 ? "(world)" : sd_model_body_name(m, k); }

/* "a, b, c" of the speeds in list (n) whose independence is `want` (-1: all). */
static void print_speeds(const sd_model *m, const agg_info *g, int want)
{
    const char *sep = "";
    for (int i = 0; i < g->nt; ++i) {
        if (want >= 0 && g->is_ind[g->tree[i]] != want) continue;
        char *label = cli_label(m, CLI_LIST_V, g->tree[i]);
        cli_printf("%s%s", sep, label ? label : "?");
        free(label);
        sep = ", ";
    }
    if (!*sep) cli_printf("(none)");
}

int cli_embed_print_text(const char *cmd, const sd_model *m, const sd_embedding *e, const double *q)
{
    const int nc = sd_model_nconstraints(m);
    if (nc == 0) return CLI_OK;
    if (!e) {
        cli_printf("embedding:   none (every constraint tree-augmented; --embed all or --embed NAME,.. embeds)\n");
        return CLI_OK;
    }
    const int na = sd_embedding_naggregates(e);
    int n_emb = 0;
    for (int c = 0; c < nc; ++c) n_emb += sd_embedding_constraint_embedded(e, c) == 1;
    const int nn = sd_embedding_nnodes(e), ne = sd_embedding_nv(e);
    cli_printf("embedding:   %d of %d constraint%s embedded in %d aggregate%s; %d node%s; %d embedded speed%s (tree: %d)\n",
               n_emb, nc, nc == 1 ? "" : "s", na, na == 1 ? "" : "s", nn, nn == 1 ? "" : "s", ne, ne == 1 ? "" : "s",
               sd_model_nv(m));
    double *cond = split_conditions(e, q);
    int rc = CLI_OK;
    for (int a = 0; a < na && rc == CLI_OK && !cli_output_failed(); ++a) {
        agg_info g = {0};
        if (!agg_get(e, a, &g)) {
            fprintf(stderr, "soadyn %s: out of memory describing the embedding\n", cmd);
            rc = CLI_FAILURE;
        } else {
            cli_printf("  aggregate %d: constraint%s", a + 1, g.nc == 1 ? "" : "s");
            for (int i = 0; i < g.nc; ++i) cli_printf("%s %s", i ? "," : "", sd_model_constraint_name(m, g.cons[i]));
            cli_printf("; hangs on %s\n    bodies (%d):", body_name(m, g.parent), g.nb);
            for (int i = 0; i < g.nb; ++i) cli_printf("%s %s", i ? "," : "", sd_model_body_name(m, g.bodies[i]));
            cli_printf("\n    independent speeds (%d of %d): ", g.ni, g.nt);
            print_speeds(m, &g, 1);
            cli_printf("\n    dependent speeds (%d): ", g.nt - g.ni);
            print_speeds(m, &g, 0);
            cli_printf("\n");
            if (cond) cli_printf("    cond(Y1) %.3g (the split's conditioning at this configuration)\n", cond[a]);
        }
        agg_free(&g);
    }
    free(cond);
    if (rc != CLI_OK) return rc;
    cli_printf("  tree-augmented:");
    int n_ta = 0;
    for (int c = 0; c < nc; ++c)
        if (sd_embedding_constraint_embedded(e, c) == 0)
            cli_printf("%s %s", n_ta++ ? "," : "", sd_model_constraint_name(m, c));
    cli_printf("%s\n", n_ta ? "" : " (none)");
    const size_t need = sd_embedding_describe(e, NULL, 0);
    char *text = malloc(need + 1);
    if (!text) {
        fprintf(stderr, "soadyn %s: out of memory describing the embedding\n", cmd);
        return CLI_FAILURE;
    }
    sd_embedding_describe(e, text, need + 1);
    cli_printf("  %s\n", text);
    free(text);
    return CLI_OK;
}

/* {"name": .., "rows": ..} list of speed labels of g whose independence is want. */
static void json_speeds(json_writer *w, const char *key, const sd_model *m, const agg_info *g, int want)
{
    jw_begin_array(w, key);
    for (int i = 0; i < g->nt; ++i) {
        if (want >= 0 && g->is_ind[g->tree[i]] != want) continue;
        char *label = cli_label(m, CLI_LIST_V, g->tree[i]);
        jw_string(w, NULL, label ? label : "?");
        free(label);
    }
    jw_end_array(w);
}

void cli_embed_json(json_writer *w, const sd_model *m, const sd_embedding *e, const double *q)
{
    if (!e) {
        jw_null(w, "embedding");
        return;
    }
    const int nc = sd_model_nconstraints(m), na = sd_embedding_naggregates(e);
    jw_begin_object(w, "embedding");
    jw_int(w, "nv", sd_embedding_nv(e));
    jw_int(w, "nodes", sd_embedding_nnodes(e));
    jw_begin_array(w, "speeds");
    for (int i = 0; i < sd_embedding_nv(e); ++i) {
        char *label = cli_embedded_speed_label(e, i);
        jw_string(w, NULL, label ? label : "?");
        free(label);
    }
    jw_end_array(w);
    jw_begin_array(w, "embedded");
    for (int c = 0; c < nc; ++c)
        if (sd_embedding_constraint_embedded(e, c) == 1) jw_string(w, NULL, sd_model_constraint_name(m, c));
    jw_end_array(w);
    jw_begin_array(w, "tree_augmented");
    for (int c = 0; c < nc; ++c)
        if (sd_embedding_constraint_embedded(e, c) == 0) jw_string(w, NULL, sd_model_constraint_name(m, c));
    jw_end_array(w);
    double *cond = split_conditions(e, q);
    jw_begin_array(w, "aggregates");
    for (int a = 0; a < na; ++a) {
        agg_info g = {0};
        if (!agg_get(e, a, &g)) {
            agg_free(&g);
            w->failed = 1; /* out of memory: the writer says so */
            break;
        }
        jw_begin_object(w, NULL);
        jw_begin_array(w, "constraints");
        for (int i = 0; i < g.nc; ++i) jw_string(w, NULL, sd_model_constraint_name(m, g.cons[i]));
        jw_end_array(w);
        jw_begin_array(w, "bodies");
        for (int i = 0; i < g.nb; ++i) jw_string(w, NULL, sd_model_body_name(m, g.bodies[i]));
        jw_end_array(w);
        if (g.parent < 0) jw_null(w, "parent_body");
        else jw_string(w, "parent_body", sd_model_body_name(m, g.parent));
        json_speeds(w, "tree_speeds", m, &g, -1);
        json_speeds(w, "independent", m, &g, 1);
        json_speeds(w, "dependent", m, &g, 0);
        if (cond) jw_number(w, "split_condition", cond[a]);
        jw_end_object(w);
        agg_free(&g);
    }
    jw_end_array(w);
    free(cond);
    const size_t need = sd_embedding_describe(e, NULL, 0);
    char *text = malloc(need + 1);
    if (text) {
        sd_embedding_describe(e, text, need + 1);
        jw_string(w, "description", text);
    } else {
        w->failed = 1;
    }
    free(text);
    jw_end_object(w);
}

int cli_json_emit(const char *cmd, const json_writer *w)
{
    size_t length = 0;
    const char *text = jw_text(w, &length);
    if (text) {
        cli_write(text, length);
        cli_write("\n", 1);
        return CLI_OK;
    }
    if (w->failed == 2)
        fprintf(stderr, "soadyn %s: '%s' is not a finite number; no JSON written\n", cmd,
                w->bad_key ? w->bad_key : "(a value)");
    else
        fprintf(stderr, "soadyn %s: %s; no JSON written\n", cmd,
                w->failed == 1 ? "out of memory forming the JSON text" : "JSON nested too deep");
    return CLI_FAILURE;
}
