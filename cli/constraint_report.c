/*
 * cli/constraint_report.c — a closure constraint's multipliers and forces for `soadyn eval`
 * (constraint_report.h).
 */
#include "constraint_report.h"

void cli_constraint_print_forces(const sd_model *model, int c, const double *lambda, const double *cut_local,
                                 const double *cut_world)
{
    const int off = sd_model_constraint_row_offset(model, c), rows = sd_model_constraint_nrows(model, c);
    for (int i = 0; i < rows; ++i) cli_printf(" %.10g", lambda[off + i]);
    cli_printf("\n");
    if (sd_model_constraint_type(model, c) == SD_CONSTRAINT_COUPLING) {
        cli_printf("    generalized force on joint a %.10g, on joint b %.10g\n", cut_local[0], cut_local[1]);
        return;
    }
    const double *fl = cut_local, *fw = cut_world;
    cli_printf("    cut-joint force on body B, constraint frame: moment %12.6g %12.6g %12.6g  force %12.6g %12.6g"
               " %12.6g\n", fl[0], fl[1], fl[2], fl[3], fl[4], fl[5]);
    cli_printf("    cut-joint force on body B, world axes:       moment %12.6g %12.6g %12.6g  force %12.6g %12.6g"
               " %12.6g\n", fw[0], fw[1], fw[2], fw[3], fw[4], fw[5]);
}

/* {"moment": f[0..2], "force": f[3..5]} named `name`. */
static void json_wrench(json_writer *w, const char *name, const double f[6])
{
    jw_begin_object(w, name);
    jw_numbers(w, "moment", f, 3);
    jw_numbers(w, "force", f + 3, 3);
    jw_end_object(w);
}

void cli_constraint_json_forces(json_writer *w, const sd_model *model, int c, const double *lambda,
                                const double *cut_local, const double *cut_world)
{
    jw_numbers(w, "lambda", lambda + sd_model_constraint_row_offset(model, c), sd_model_constraint_nrows(model, c));
    if (sd_model_constraint_type(model, c) == SD_CONSTRAINT_COUPLING) {
        jw_numbers(w, "generalized_forces", cut_local, 2); /* on joint a, on joint b */
        return;
    }
    json_wrench(w, "cut_force_local", cut_local);
    json_wrench(w, "cut_force_world", cut_world);
}
