/*
 * fuzz/libxml2_trap.c — libxml2's global error handlers replaced by ones that print what libxml2
 * tried to say and trap (libxml2_trap.h says why).
 */
#include "libxml2_trap.h"

#include <stdio.h>

#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

static void libxml2_generic_message(void *context, const char *format, ...)
{
    (void)context;
    fprintf(stderr, "fuzz: contract broken: libxml2 printed past the reader: %s\n", format);
    __builtin_trap();
}

#if LIBXML_VERSION >= 21200
static void libxml2_structured_message(void *context, const xmlError *error)
#else
static void libxml2_structured_message(void *context, xmlErrorPtr error)
#endif
{
    (void)context;
    fprintf(stderr, "fuzz: contract broken: libxml2 printed past the reader (line %d): %s\n", error ? error->line : 0,
            error && error->message ? error->message : "(no message)");
    __builtin_trap();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    xmlSetGenericErrorFunc(NULL, libxml2_generic_message);
    xmlSetStructuredErrorFunc(NULL, libxml2_structured_message);
    return 0;
}
