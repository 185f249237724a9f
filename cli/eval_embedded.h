/*
 * cli/eval_embedded.h — `soadyn eval` on the embedded system (eval_embedded.c).
 */
#ifndef SOADYN_CLI_EVAL_EMBEDDED_H
#define SOADYN_CLI_EVAL_EMBEDDED_H

#include "cli.h"

/* Evaluate and print (text, or JSON when json) every algorithm of the embedding e at the state
 * (q, u) with tree joint forces tau, all in the tree's sizes as parsed by eval (q nq; u, tau, qdd
 * nv; qdd NULL: the inverse dynamics at the forward dynamics' qdd). Returns an exit status. */
int cli_eval_embedded(const sd_model *model, const sd_embedding *e, const double *q, const double *u,
                      const double *tau, const double *qdd, int json);

#endif /* SOADYN_CLI_EVAL_EMBEDDED_H */
