/*
 * fuzz/fuzz_sdf_model.c — soadyn's SDF layer (src/io/sdf_reader.cc, sdf_build.cc: frames, the spanning tree,
 * loops, inertials, axes, the model for the builder) on SDF documents built from the fuzz input,
 * so that every input is well-formed XML of known elements that libsdformat accepts or refuses on
 * its merits and, most of the time, hands to soadyn: up to 6 links (poses relative to one another,
 * inertials with numbers that break code), up to 8 joints of every type between them and the world
 * (loops and cycles included), axes, limits, dynamics, a <frame>, a static model, a canonical link.
 * Random text (fuzz_sdf) mostly stops at libsdformat's parser, which dominates the time of a load
 * (it reads its own SDF specification again on every load: some 100 ms without sanitizers), so
 * each input here is worth many random ones. Each document is loaded once, one of the two ways
 * fuzz_sdf loads text (the input chooses), and judged by fuzz_check_load (model_check.c).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/sdf.h>

#include "fuzz_bytes.h"
#include "model_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

typedef struct text {
    char buf[16384];
    size_t n;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
    if (t->n >= sizeof t->buf) return;
    va_list ap;
    va_start(ap, fmt);
    const int w = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
    va_end(ap);
    if (w > 0) t->n += (size_t)w < sizeof t->buf - t->n ? (size_t)w : sizeof t->buf - t->n - 1;
}

static void numbers(text *t, fuzz_bytes *b, int count, double scale)
{
    for (int i = 0; i < count; ++i) put(t, "%s%.17g", i ? " " : "", fuzz_number(b, scale));
}

static void pose(text *t, fuzz_bytes *b, int nlinks)
{
    const int rel = fuzz_int(b, -1, nlinks);
    if (rel > 0) put(t, "<pose relative_to=\"l%d\">", rel);
    else put(t, "<pose>");
    numbers(t, b, 6, 2.0);
    put(t, "</pose>");
}

static void link_element(text *t, fuzz_bytes *b, int k, int nlinks)
{
    put(t, "<link name=\"l%d\">", k);
    if (fuzz_u8(b) & 1) pose(t, b, nlinks);
    const unsigned inertial = fuzz_u8(b);
    if (inertial % 4 != 0) {
        put(t, "<inertial>");
        if (inertial & 4) {
            put(t, "<pose>");
            numbers(t, b, 6, 1.0);
            put(t, "</pose>");
        }
        put(t, "<mass>%.17g</mass><inertia>", fuzz_number(b, 5.0));
        static const char *const tag[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
        for (int i = 0; i < 6; ++i) put(t, "<%s>%.17g</%s>", tag[i], fuzz_number(b, i < 3 ? 1.0 : 0.2), tag[i]);
        put(t, "</inertia></inertial>");
    }
    put(t, "</link>");
}

static void axis(text *t, fuzz_bytes *b, const char *tag)
{
    put(t, "<%s><xyz%s>", tag, fuzz_u8(b) % 4 == 0 ? " expressed_in=\"__model__\"" : "");
    numbers(t, b, 3, 1.0);
    put(t, "</xyz>");
    const unsigned extra = fuzz_u8(b);
    if (extra & 1) put(t, "<limit><lower>%.17g</lower><upper>%.17g</upper></limit>", fuzz_number(b, 3.0), fuzz_number(b, 3.0));
    if (extra & 2)
        put(t, "<dynamics><damping>%.17g</damping><friction>%.17g</friction><spring_reference>%.17g</spring_reference>"
               "<spring_stiffness>%.17g</spring_stiffness></dynamics>",
            fuzz_number(b, 2.0), fuzz_number(b, 2.0), fuzz_number(b, 2.0), fuzz_number(b, 2.0));
    put(t, "</%s>", tag);
}

static void joint_element(text *t, fuzz_bytes *b, int j, int nlinks)
{
    static const char *const types[] = {"revolute", "prismatic", "fixed", "ball", "universal",
                                        "continuous", "screw", "revolute2", "gearbox"};
    const int type = fuzz_int(b, 0, (int)(sizeof types / sizeof *types) - 1);
    const int parent = fuzz_int(b, 0, nlinks), child = fuzz_int(b, 1, nlinks);
    put(t, "<joint name=\"j%d\" type=\"%s\">", j, types[type]);
    if (parent == 0) put(t, "<parent>world</parent>");
    else put(t, "<parent>l%d</parent>", parent);
    put(t, "<child>l%d</child>", child);
    if (fuzz_u8(b) & 1) pose(t, b, nlinks);
    if (fuzz_u8(b) % 8 != 0) axis(t, b, "axis");
    if (type == 4 || type == 7) axis(t, b, "axis2");
    if (type == 6) put(t, "<screw_thread_pitch>%.17g</screw_thread_pitch>", fuzz_number(b, 1.0));
    put(t, "</joint>");
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    fuzz_bytes b = {bytes, size};
    static text t;
    t.n = 0;
    const int nlinks = fuzz_int(&b, 1, 6), njoints = fuzz_int(&b, 0, 8);
    const unsigned flags = fuzz_u8(&b);
    put(&t, "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\"><model name=\"m\"");
    if (flags & 1) put(&t, " canonical_link=\"l%d\"", fuzz_int(&b, 1, nlinks));
    put(&t, ">");
    if ((flags & 6) == 6) put(&t, "<static>true</static>");
    if (flags & 8) {
        put(&t, "<pose>");
        numbers(&t, &b, 6, 3.0);
        put(&t, "</pose>");
    }
    for (int k = 1; k <= nlinks; ++k) link_element(&t, &b, k, nlinks);
    for (int j = 0; j < njoints; ++j) joint_element(&t, &b, j, nlinks);
    if (flags & 16) {
        put(&t, "<frame name=\"f\" attached_to=\"l%d\">", fuzz_int(&b, 1, nlinks));
        pose(&t, &b, nlinks);
        put(&t, "</frame>");
    }
    put(&t, "</model></sdf>\n");

    static const struct {
        const char *name;
        sd_sdf_options options;
    } ways[] = {
        {"sdf model (floating unless jointed to world, fixed joints merged)", {.keep_fixed_joints = 0}},
        {"sdf model (welded to the world, fixed joints kept)", {.keep_fixed_joints = 1, .fixed_base = 1}},
    };
    /* one load per input, the way chosen by the input (a load costs libsdformat's 100 ms) */
    const size_t w = (flags >> 5) & 1;
    sd_model *model = NULL;
    sd_error err;
    const sd_status st = sd_sdf_load_string(t.buf, t.n, "<fuzz>", &ways[w].options, &model, &err);
    fuzz_check_load(ways[w].name, st, model, &err, fuzz_input_seed(bytes, size));
    sd_model_free(model);
    return 0;
}
