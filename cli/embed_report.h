/*
 * cli/embed_report.h — a constraint embedding (soadyn/embed.h) described for `soadyn info` and
 * `soadyn eval`: which constraints are embedded and which tree-augmented, each aggregate's bodies,
 * constraints, parent body, tree speeds and the independent ones, as text lines or JSON; and the one
 * way the commands hand a JSON text to standard output.
 */
#ifndef SOADYN_CLI_EMBED_REPORT_H
#define SOADYN_CLI_EMBED_REPORT_H

#include "cli.h"
#include "json_writer.h"

/* Text: "embedding: ..." and one block per aggregate. embedding NULL: the model's constraints are all
 * tree-augmented (said, with how to embed them); nothing for a model without constraints. q: a
 * configuration that closes the loops, for the split's condition number (NULL: not printed).
 * Returns CLI_OK or CLI_FAILURE (out of memory, after a message). */
int cli_embed_print_text(const char *cmd, const sd_model *model, const sd_embedding *embedding, const double *q);
/* JSON: an object "embedding" (null for no embedding): per constraint embedded or not, nv, nodes,
 * the aggregates, the tree-augmented constraints, the library's description. q as above. */
void cli_embed_json(json_writer *w, const sd_model *model, const sd_embedding *embedding, const double *q);
/* Write the JSON text and a newline to stdout; if the writer failed, say why on stderr (naming
 * `cmd`) and return CLI_FAILURE. */
int cli_json_emit(const char *cmd, const json_writer *w);

#endif /* SOADYN_CLI_EMBED_REPORT_H */
