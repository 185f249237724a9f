/*
 * cli/constraint_report.h — one closure constraint's multipliers and cut-joint forces as `soadyn
 * eval` prints them, as text and as JSON; the same for the tree-augmented evaluation (cmd_eval.c)
 * and the embedded one (eval_embedded.c).
 */
#ifndef SOADYN_CLI_CONSTRAINT_REPORT_H
#define SOADYN_CLI_CONSTRAINT_REPORT_H

#include "cli.h"
#include "json_writer.h"

/* Text, after the caller's "  NAME (...) lambda:": constraint c's multipliers (lambda: all rows of the
 * model), then its forces: the generalized forces on the two joints of a coupling, else the cut-joint
 * force on body B in the constraint frame (cut_local) and in world axes (cut_world), 6 each. */
void cli_constraint_print_forces(const sd_model *model, int c, const double *lambda, const double *cut_local,
                                 const double *cut_world);
/* JSON members of constraint c's object: "lambda", then "generalized_forces" (a coupling) or
 * "cut_force_local" and "cut_force_world" ({moment, force}). Arguments as above. */
void cli_constraint_json_forces(json_writer *w, const sd_model *model, int c, const double *lambda,
                                const double *cut_local, const double *cut_world);

#endif /* SOADYN_CLI_CONSTRAINT_REPORT_H */
