/*
 * fuzz/fuzz_values.c — libFuzzer target for the soadyn command's option and value parsing
 * (cli/args.c, compiled into this target as it is): the input is at once
 *   - a value list for --q and for --u ("0.1,0.2,..." or "shoulder=0.3,neck=1"), parsed against a
 *     fixed model with a hinge of every type, once with and once without the `given` flags;
 *   - a number for cli_parse_double and cli_parse_long;
 *   - a command line, one argument per line, for cli_parse, whose --q and --u values are then parsed
 *     as the command does.
 * The contract: a parse returns success or the usage error, and prints a message naming the option
 * (or the command) exactly when it fails; it never writes an entry it does not flag, writes only
 * finite numbers, sets every entry on a successful full list and at least one on a successful
 * NAME=VALUE list, and does the same with and without `given`. A broken contract prints one line and
 * traps. (A failed allocation would also return 1 without a message; under ASan an allocation of
 * at most -max_len bytes does not fail.)
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

static sd_model *model; /* built once, read only */

/* Where cli/args.c prints (cli_streams.h): its stderr into `messages`, rewound before each parse. */
FILE *fuzz_cli_stdout;
FILE *fuzz_cli_stderr;
static char *messages;
static size_t messages_size;

static void messages_rewind(void)
{
    fflush(fuzz_cli_stderr);
    fseek(fuzz_cli_stderr, 0, SEEK_SET);
}

/* How many bytes the parser printed since messages_rewind(), at `messages` (not terminated there:
 * a rewound memory stream keeps the older, longer text after it). */
static size_t messages_read(void)
{
    fflush(fuzz_cli_stderr);
    return messages_size;
}

static int messages_contain(size_t length, const char *name)
{
    const size_t n = strlen(name);
    for (size_t i = 0; i + n <= length; ++i)
        if (memcmp(messages + i, name, n) == 0) return 1;
    return 0;
}

static _Noreturn void contract_broken(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fuzz: contract broken: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    __builtin_trap();
}

/* A hinge of every type, a 0-dof body, and joint names that are prefixes of labels of others. */
static sd_model *build_model(void)
{
    static const struct {
        const char *body, *parent, *joint;
        sd_hinge_type hinge;
    } bodies[] = {
        {"torso", NULL, "root", SD_HINGE_FREE},
        {"upper_arm", "torso", "shoulder", SD_HINGE_REVOLUTE},
        {"forearm", "upper_arm", "elbow", SD_HINGE_REVOLUTE},
        {"hand", "forearm", "wrist", SD_HINGE_UNIVERSAL},
        {"head", "torso", "neck", SD_HINGE_SPHERICAL},
        {"carriage", "torso", "rail", SD_HINGE_PRISMATIC},
        {"plate", "carriage", "plane", SD_HINGE_PLANAR},
        {"tool", "hand", "tool_mount", SD_HINGE_FIXED},
        {"finger", "hand", "wrist_1", SD_HINGE_REVOLUTE},
    };
    sd_builder *builder = sd_builder_new();
    if (builder == NULL) return NULL;
    sd_error err;
    sd_model *m = NULL;
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; ++i) {
        sd_body_desc desc;
        sd_body_desc_init(&desc);
        desc.name = bodies[i].body;
        desc.parent = bodies[i].parent;
        desc.joint_name = bodies[i].joint;
        desc.hinge = bodies[i].hinge;
        desc.mass = 1.0;
        desc.inertia[0] = desc.inertia[4] = desc.inertia[8] = 0.1;
        if (sd_builder_add_body(builder, &desc, &err) != SD_OK) goto done;
    }
    if (sd_builder_build(builder, &m, &err) != SD_OK) m = NULL;
done:
    if (m == NULL) fprintf(stderr, "fuzz_values: the fixed model does not build: %s\n", err.message);
    sd_builder_free(builder);
    return m;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    model = build_model();
    fuzz_cli_stdout = fopen("/dev/null", "w");
    fuzz_cli_stderr = open_memstream(&messages, &messages_size);
    if (model == NULL || fuzz_cli_stdout == NULL || fuzz_cli_stderr == NULL) abort();
    return 0;
}

/* A failure, and only a failure, prints; what it prints are whole lines naming `name`. */
static void check_messages(const char *call, int failed, const char *name)
{
    const size_t length = messages_read();
    const int shown = length < 400 ? (int)length : 400;
    if (!failed && length > 0) contract_broken("%s succeeded and printed '%.*s'", call, shown, messages);
    if (failed && length == 0) contract_broken("%s failed without a message", call);
    if (failed && (messages[length - 1] != '\n' || !messages_contain(length, name)))
        contract_broken("%s: the message does not name %s in whole lines: '%.*s'", call, name, shown, messages);
}

/* One value list against one kind of labels, with and without the `given` flags. */
static void check_value_list(const char *text, cli_list_kind kind)
{
    const int n = kind == CLI_LIST_Q ? sd_model_nq(model) : sd_model_nv(model);
    const char *option = kind == CLI_LIST_Q ? "q" : "u";
    const char *option_named = kind == CLI_LIST_Q ? "--q" : "--u";
    double out[32], out_without_flags[32], preset[32];
    unsigned char given[32];
    if (n > 32) abort();
    for (int i = 0; i < n; ++i) preset[i] = out[i] = out_without_flags[i] = 1000.0 + i;
    memset(given, 0, sizeof given);

    messages_rewind();
    const int rc = cli_parse_values(model, option, text, kind, out, given);
    if (rc != 0 && rc != 1) contract_broken("cli_parse_values --%s returned %d", option, rc);
    check_messages("cli_parse_values", rc != 0, option_named);
    int set = 0;
    for (int i = 0; i < n; ++i) {
        if (given[i] > 1) contract_broken("--%s: given[%d] = %d", option, i, given[i]);
        if (!given[i] && out[i] != preset[i]) contract_broken("--%s: entry %d written but not flagged", option, i);
        if (given[i] && !isfinite(out[i])) contract_broken("--%s: entry %d set to %g", option, i, out[i]);
        set += given[i];
    }
    if (rc == 0 && strchr(text, '=') == NULL && set != n)
        contract_broken("--%s: a full list succeeded and set %d of %d entries", option, set, n);
    if (rc == 0 && strchr(text, '=') != NULL && set == 0)
        contract_broken("--%s: a NAME=VALUE list succeeded and set nothing", option);

    const int rc_without_flags = cli_parse_values(model, option, text, kind, out_without_flags, NULL);
    if (rc_without_flags != rc)
        contract_broken("--%s: returned %d with `given` and %d without", option, rc, rc_without_flags);
    if (memcmp(out, out_without_flags, (size_t)n * sizeof *out) != 0)
        contract_broken("--%s: different values with and without `given`", option);
}

static void check_number(const char *text)
{
    double d = 0.0;
    if (cli_parse_double(text, &d) == 0 && !isfinite(d)) contract_broken("cli_parse_double accepted %g", d);
    long l = 0;
    (void)cli_parse_long(text, &l);
}

static int points_into(const char *p, char **argv, int argc)
{
    for (int i = 0; i < argc; ++i)
        if (p >= argv[i] && p <= argv[i] + strlen(argv[i])) return 1;
    return 0;
}

/* The text as a command line "soadyn eval ARG1 ARG2 ..." with one argument per line. */
static void check_command_line(char *text)
{
    enum { max_args = 64 };
    char *argv[max_args + 1];
    int argc = 0;
    argv[argc++] = "eval";
    for (char *line = text; argc < max_args; ++argc) {
        argv[argc] = line;
        char *newline = strchr(line, '\n');
        if (newline == NULL) { ++argc; break; }
        *newline = '\0';
        line = newline + 1;
    }
    argv[argc] = NULL;

    const char *q = NULL, *u = NULL, *positional = NULL;
    int floating = 0;
    const cli_option options[] = {
        {"q", 1, &q, NULL}, {"u", 1, &u, NULL}, {"floating", 0, NULL, &floating}, {NULL, 0, NULL, NULL}};
    messages_rewind();
    const int rc = cli_parse("eval", argc, argv, options, "usage: soadyn eval MODEL [--q Q] [--u U] [--floating]\n",
                             &positional);
    if (rc != -1 && rc != CLI_OK && rc != CLI_USAGE) contract_broken("cli_parse returned %d", rc);
    check_messages("cli_parse", rc == CLI_USAGE, "soadyn eval");
    if (rc != -1) return;
    if (positional == NULL || !points_into(positional, argv, argc))
        contract_broken("cli_parse went on without a model argument inside argv");
    if ((q != NULL && !points_into(q, argv, argc)) || (u != NULL && !points_into(u, argv, argc)))
        contract_broken("cli_parse left an option value outside argv");
    if (floating != 0 && floating != 1) contract_broken("cli_parse set a flag to %d", floating);
    if (q != NULL) check_value_list(q, CLI_LIST_Q);
    if (u != NULL) check_value_list(u, CLI_LIST_V);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, bytes, size);
    text[size] = '\0'; /* an embedded NUL ends the text, as it would end an argv string */
    check_value_list(text, CLI_LIST_Q);
    check_value_list(text, CLI_LIST_V);
    check_number(text);
    check_command_line(text);
    free(text);
    return 0;
}
