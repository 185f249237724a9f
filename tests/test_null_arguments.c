/*
 * tests/test_null_arguments.c — every *_init function of the public headers takes NULL and does
 * nothing (sd_sim_options_init(NULL) and sd_body_desc_init(NULL) dereferenced it: UBSan, then a
 * crash). Builds with every component: the view and sim functions exist as stubs when not built.
 */
#include <soadyn/config.h>
#include <soadyn/soadyn.h>

#include "test_util.h"

int main(void)
{
    sd_body_desc_init(NULL);
    sd_constraint_desc_init(NULL);
    sd_flex_desc_init(NULL);
    sd_beam_spec_init(NULL);
    sd_embed_options_init(NULL);
    sd_geared_motor_desc_init(NULL);
    sd_sim_options_init(NULL);
    sd_view_options_init(NULL);
    CHECK(1); /* reached without a crash */
    return test_summary("test_null_arguments");
}
