/*
 * fuzz/fuzz_flex.c — libFuzzer target for the flexible-body data reader (src/io/flex_file.c): the
 * input is a JSON data file's text, read by sd_flex_data_read_text (the text half of
 * sd_flex_data_read_file). Contract, beyond no crash, leak or undefined behaviour:
 *   - a refused file leaves no data and a message that starts with the file's name;
 *   - a read file gives a description of the sizes it says, with finite numbers, node masses >= 0
 *     and symmetric K_m and D_m (what the reader promises; flex_file.c);
 *   - that description, handed to the model builder as the body of a one-body model (a revolute
 *     hinge), is accepted or refused with a message, and an accepted model keeps the contract of
 *     every model reader (model_check.c: finite description, dynamics within the contract).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/flex.h>

#include "io/flex_file.h"
#include "model_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

static void broken(const char *what)
{
    fprintf(stderr, "fuzz: contract broken: flex reader: %s\n", what);
    __builtin_trap();
}

static void check_desc(const sd_flex_desc *d)
{
    if (d == NULL || d->n_nodes < 1 || d->n_modes < 1 || d->n_modes > 1000) broken("sizes out of range");
    const size_t n = (size_t)d->n_nodes, nm = (size_t)d->n_modes;
    for (size_t j = 0; j < n; ++j) {
        if (!(d->node_mass[j] >= 0.0) || !isfinite(d->node_mass[j])) broken("a node mass negative or not finite");
        for (int i = 0; i < 3; ++i)
            if (!isfinite(d->node_position[3 * j + i])) broken("a position not finite");
        for (int i = 0; d->node_inertia != NULL && i < 9; ++i)
            if (!isfinite(d->node_inertia[9 * j + i])) broken("an inertia not finite");
    }
    for (size_t i = 0; i < 6 * n * nm; ++i)
        if (!isfinite(d->modes[i])) broken("a mode shape entry not finite");
    double big = 0.0;
    for (size_t i = 0; i < nm * nm; ++i) {
        if (!isfinite(d->stiffness[i]) || (d->damping != NULL && !isfinite(d->damping[i]))) broken("K or D not finite");
        big = fmax(big, fabs(d->stiffness[i]));
    }
    for (size_t r = 0; r < nm; ++r)
        for (size_t s = 0; s < r; ++s)
            if (fabs(d->stiffness[nm * r + s] - d->stiffness[nm * s + r]) > 1e-9 * big) broken("K not symmetric");
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    sd_flex_data *data = (sd_flex_data *)&data;
    sd_error err;
    err.message[0] = '\0';
    const sd_status st = sd_flex_data_read_text((const char *)bytes, size, "<fuzz>", &data, &err);
    if (st != SD_OK) {
        if (data != NULL) broken("a refused file left data");
        if (strncmp(err.message, "<fuzz>", 6) != 0) broken("a refusal's message does not name the file");
        return 0;
    }
    const sd_flex_desc *d = sd_flex_data_desc(data);
    check_desc(d);
    sd_builder *b = sd_builder_new();
    sd_body_desc body;
    sd_body_desc_init(&body);
    body.name = "flexible";
    body.joint_name = "hinge";
    body.hinge = SD_HINGE_REVOLUTE;
    body.mass = 1.0;
    for (int i = 0; i < 3; ++i) body.inertia[4 * i] = 0.1;
    sd_model *model = NULL;
    sd_status bst = sd_builder_add_body(b, &body, &err);
    if (bst == SD_OK) bst = sd_builder_set_flexible(b, "flexible", d, &err);
    if (bst == SD_OK) bst = sd_builder_build(b, &model, &err);
    if (bst != SD_OK && err.message[0] == '\0') broken("the builder refused the description without a message");
    if (bst == SD_OK) fuzz_check_load("flex (a revolute body)", bst, model, &err, fuzz_input_seed(bytes, size));
    sd_model_free(model);
    sd_builder_free(b);
    sd_flex_data_free(data);
    return 0;
}
