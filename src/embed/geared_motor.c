/*
 * src/embed/geared_motor.c — the geared motor of 002 Eq 17 as a bundled kind: a link and a rotor,
 * both revolute children of one parent body, coupled by q_rotor = ratio q_link (a COUPLING
 * constraint, embedded by default). Embedded, the pair is one aggregate with
 * theta-dot_S = [theta-dot_mtr, theta-dot_lnk], X_S = [ratio, 1]^T (002 Eq 17) when the link's speed
 * is named independent; the split's own pivoting picks the rotor's (the link's column of the row
 * u_rotor - ratio u_link is the larger when |ratio| > 1), X_S = [1, 1/ratio]^T. Only the builder is
 * called here, so this is a core source.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/embed.h>

#include "internal.h"

void sd_geared_motor_desc_init(sd_geared_motor_desc *desc)
{
    if (!desc) return; /* nothing to fill (was a NULL dereference) */
    memset(desc, 0, sizeof *desc);
    sd_transform_identity(&desc->placement);
    sd_transform_identity(&desc->rotor_placement);
    desc->axis[2] = 1.0;
    desc->rotor_axis[2] = 1.0;
    desc->ratio = 1.0;
    desc->embed = 1;
}

/* "file:line: " of the description, or "" */
static void where(const sd_geared_motor_desc *d, char *out, size_t size)
{
    out[0] = '\0';
    if (d->source_file && d->source_line > 0) snprintf(out, size, "%s:%d: ", d->source_file, d->source_line);
    else if (d->source_file) snprintf(out, size, "%s: ", d->source_file);
}

/* A part's failure, re-worded to name the motor (the part's own message already carries the
 * source location when it has one). */
static sd_status part_failed(sd_error *err, sd_status st, const char *at, const char *name, const char *part)
{
    if (err) {
        char inner[sizeof err->message];
        memcpy(inner, err->message, sizeof inner);
        inner[sizeof inner - 1] = '\0';
        const size_t n = strlen(at);
        const char *rest = n && strncmp(inner, at, n) == 0 ? inner + n : inner;
        sd_error_set(err, st, "%sgeared motor '%s': its %s: %s", at, name, part, rest);
    }
    return st;
}

sd_status sd_builder_add_geared_motor(sd_builder *builder, const sd_geared_motor_desc *desc, sd_error *err)
{
    if (!builder || !desc) return sd_error_set(err, SD_E_ARGUMENT, "sd_builder_add_geared_motor: NULL argument");
    char at[300];
    where(desc, at, sizeof at);
    if (!desc->name || !desc->name[0]) return sd_error_set(err, SD_E_MODEL, "%sa geared motor has no name", at);
    const char *name = desc->name;
    if (!isfinite(desc->ratio) || desc->ratio == 0.0)
        return sd_error_set(err, SD_E_MODEL, "%sgeared motor '%s': the gear ratio %g must be finite and nonzero", at,
                            name, desc->ratio);
    const size_t len = strlen(name);
    if (len + sizeof "_rotor" > 256)
        return sd_error_set(err, SD_E_MODEL, "%sgeared motor '%s': the name is too long", at, name);
    char rotor[256 + 8], gear[256 + 8];
    snprintf(rotor, sizeof rotor, "%s_rotor", name);
    snprintf(gear, sizeof gear, "%s_gear", name);

    sd_body_desc b;
    sd_body_desc_init(&b);
    b.name = name;
    b.parent = desc->parent;
    b.hinge = SD_HINGE_REVOLUTE;
    b.placement = desc->placement;
    memcpy(b.axis, desc->axis, sizeof b.axis);
    b.mass = desc->mass;
    memcpy(b.com, desc->com, sizeof b.com);
    memcpy(b.inertia, desc->inertia, sizeof b.inertia);
    b.damping = desc->damping;
    b.source_file = desc->source_file;
    b.source_line = desc->source_line;
    sd_status st = sd_builder_add_body(builder, &b, err);
    if (st != SD_OK) return part_failed(err, st, at, name, "link");

    sd_body_desc_init(&b);
    b.name = rotor;
    b.parent = desc->parent;
    b.hinge = SD_HINGE_REVOLUTE;
    b.placement = desc->rotor_placement;
    memcpy(b.axis, desc->rotor_axis, sizeof b.axis);
    b.mass = desc->rotor_mass;
    memcpy(b.com, desc->rotor_com, sizeof b.com);
    memcpy(b.inertia, desc->rotor_inertia, sizeof b.inertia);
    b.source_file = desc->source_file;
    b.source_line = desc->source_line;
    if ((st = sd_builder_add_body(builder, &b, err)) != SD_OK) return part_failed(err, st, at, name, "rotor");

    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = gear;
    c.type = SD_CONSTRAINT_COUPLING;
    c.joint_a = rotor; /* q_rotor = ratio q_link: the rotor turns ratio times faster */
    c.joint_b = name;
    c.ratio = desc->ratio;
    c.embed = desc->embed;
    c.source_file = desc->source_file;
    c.source_line = desc->source_line;
    if ((st = sd_builder_add_constraint(builder, &c, err)) != SD_OK) return part_failed(err, st, at, name, "gear");
    return SD_OK;
}
