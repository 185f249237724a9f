/*
 * io/xml_read.c — XML text to a libxml2 document, quiet and closed (xml_read.h).
 *
 * Quiet: libxml2 reports through three channels, and each is caught for the length of one parse.
 * Errors of the parser reach the parser context's structured handler. Before libxml2 2.13,
 * encoding and I/O errors (a wrong byte for the declared encoding, "encoder error") are raised
 * without the context and go to the calling thread's global handlers, the structured one and the
 * generic printf-style one, whose default prints to stderr. libxml2 keeps those handlers per
 * thread (thread-local global state when built with threads, as Debian's is), so they are set
 * around the parse and the caller's own are put back after it: nothing is shared with other
 * threads. From 2.13 on the context's handler receives everything.
 *
 * Closed: XML_PARSE_NONET forbids the network; without XML_PARSE_NOENT, XML_PARSE_DTDLOAD and
 * XML_PARSE_DTDVALID libxml2 neither substitutes entities nor loads an external DTD or external
 * entity (an attribute that refers to one is a fatal error), and from 2.13 XML_PARSE_NO_XXE says
 * so once more.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>

#include "io/io_common.h"
#include "io/xml_read.h"

/* What one parse reported: the first fatal error, else the first error, with its line. */
typedef struct xml_error_sink {
    xmlParserCtxtPtr ctxt; /* for the line of errors raised without it */
    int have, fatal, line;
    int encoding;          /* an input conversion error: its line is found from its bytes */
    int out_of_memory;     /* libxml2 ran out of memory: said as such, not as malformed XML */
    char message[240];
} xml_error_sink;

/* Keep `text` as the sink's message on one line: newlines become "; ", trailing blanks go. */
static void sink_keep(xml_error_sink *sink, int fatal, int encoding, int line, const char *text)
{
    if (sink->have && (sink->fatal || !fatal)) return;
    sink->have = 1;
    sink->fatal = fatal;
    sink->encoding = encoding;
    const xmlParserInputPtr input = sink->ctxt != NULL ? sink->ctxt->input : NULL;
    sink->line = line > 0 ? line : (input != NULL && input->line > 0 ? input->line : 0);
    size_t n = 0;
    for (const char *c = text != NULL ? text : "error"; *c != '\0' && n + 3 < sizeof sink->message; ++c) {
        if (*c == '\n' || *c == '\r') {
            if (c[1] != '\0' && n > 0) sink->message[n++] = ';', sink->message[n++] = ' ';
        } else {
            sink->message[n++] = *c;
        }
    }
    while (n > 0 && (sink->message[n - 1] == ' ' || sink->message[n - 1] == ';')) --n;
    sink->message[n] = '\0';
}

#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_ptr;
#else
typedef xmlErrorPtr xml_error_ptr;
#endif

static void sink_structured(xml_error_sink *sink, xml_error_ptr error)
{
    if (sink == NULL || error == NULL) return;
    if (error->code == XML_ERR_NO_MEMORY) sink->out_of_memory = 1;
    if (error->level < XML_ERR_ERROR) return;
    sink_keep(sink, error->level == XML_ERR_FATAL, error->domain == XML_FROM_I18N, error->line, error->message);
}

/* The parser context's handler: called with the context (its userData). */
static void record_context_error(void *user, xml_error_ptr error)
{
    const xmlParserCtxtPtr ctxt = user;
    sink_structured(ctxt != NULL ? ctxt->_private : NULL, error);
}

#if LIBXML_VERSION < 21300
/* The thread's global handlers, set around one parse: called with the sink. */
static void record_global_error(void *user, xml_error_ptr error) { sink_structured(user, error); }

static void record_generic_error(void *user, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void record_generic_error(void *user, const char *fmt, ...)
{
    char text[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    xml_error_sink *sink = user;
    /* the only generic message of an allocation failure (tree.c, xmlmemory.c): its words */
    if (strstr(text, "Memory allocation failed") != NULL || strstr(text, "out of memory") != NULL)
        sink->out_of_memory = 1;
    sink_keep(sink, 0, 0, 0, text);
}
#endif

/* The line of an input conversion error. libxml2 converts the input to UTF-8 in blocks ahead of
 * the parser, so the parser's line is the start of the block; the message ends with the offending
 * bytes ("..., bytes 0x81 0xFF 0x80 0x22"), whose first occurrence in the text gives the line.
 * 0 when they cannot be found. */
static int line_of_bytes(const char *xml, size_t length, const char *message)
{
    const char *at = strstr(message, "bytes 0x");
    if (at == NULL) return 0;
    unsigned char bytes[4];
    size_t n = 0;
    for (const char *s = at + 6; n < sizeof bytes && s[0] == '0' && s[1] == 'x';) {
        char *end;
        const unsigned long v = strtoul(s + 2, &end, 16);
        if (end == s + 2 || v > 0xFF) break;
        bytes[n++] = (unsigned char)v;
        s = end;
        while (*s == ' ') ++s;
    }
    if (n == 0 || n > length) return 0;
    int line = 1;
    for (size_t i = 0; i + n <= length; ++i) {
        if (memcmp(xml + i, bytes, n) == 0) return line;
        if (xml[i] == '\n') ++line;
    }
    return 0;
}

sd_status sd_xml_read(const char *xml, size_t length, const char *source, xmlDoc **doc, sd_error *err)
{
    *doc = NULL;
    if (length > INT_MAX)
        return sd_io_fail(err, SD_E_IO, source, 0, "file too large (%zu bytes)", length);
    xml_error_sink sink = {NULL, 0, 0, 0, 0, 0, ""};
#if LIBXML_VERSION < 21300
    /* set before the parser context is made: failing to make it is reported through them too */
    const xmlStructuredErrorFunc saved_structured = xmlStructuredError;
    void *const saved_structured_context = xmlStructuredErrorContext;
    const xmlGenericErrorFunc saved_generic = xmlGenericError;
    void *const saved_generic_context = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(&sink, record_global_error);
    xmlSetGenericErrorFunc(&sink, record_generic_error);
#endif
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    int options = XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR | XML_PARSE_BIG_LINES;
    if (ctxt != NULL) {
        sink.ctxt = ctxt;
        ctxt->_private = &sink;
#if LIBXML_VERSION >= 21300
        options |= XML_PARSE_NO_XXE;
        xmlCtxtSetErrorHandler(ctxt, record_context_error, ctxt);
#else
        ctxt->sax->serror = record_context_error; /* called with ctxt->userData, which is ctxt */
#endif
        *doc = xmlCtxtReadMemory(ctxt, xml, (int)length, source, NULL, options);
    }
#if LIBXML_VERSION < 21300
    xmlSetStructuredErrorFunc(saved_structured_context, saved_structured);
    xmlSetGenericErrorFunc(saved_generic_context, saved_generic);
#endif
    if (ctxt == NULL) return sd_io_fail(err, SD_E_MEMORY, source, 0, "out of memory reading the XML");
    sd_status st = SD_OK;
    if (sink.out_of_memory || ctxt->errNo == XML_ERR_NO_MEMORY) {
        /* the text may be fine: say what happened, not "malformed" */
        st = sd_io_fail(err, SD_E_MEMORY, source, sink.line, "out of memory reading the XML (%zu bytes)", length);
        xmlFreeDoc(*doc);
        *doc = NULL;
    } else if (*doc == NULL || !ctxt->wellFormed) {
        if (sink.have && sink.encoding) {
            const int line = line_of_bytes(xml, length, sink.message);
            if (line > 0) sink.line = line;
        }
        st = sd_io_fail(err, SD_E_PARSE, source, sink.have ? sink.line : 0, "malformed XML: %s",
                        sink.have ? sink.message : "the document could not be parsed");
        xmlFreeDoc(*doc);
        *doc = NULL;
    }
    xmlFreeParserCtxt(ctxt);
    return st;
}

/* ---------------------------------------------------------------- a reader's whole use of libxml2 */

#if LIBXML_VERSION < 21300

static void quiet_structured(void *user, xml_error_ptr error)
{
    sd_xml_quiet *quiet = user;
    if (error != NULL && error->code == XML_ERR_NO_MEMORY) quiet->out_of_memory = 1;
}

static void quiet_generic(void *user, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void quiet_generic(void *user, const char *fmt, ...)
{
    sd_xml_quiet *quiet = user;
    char text[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (strstr(text, "Memory allocation failed") != NULL || strstr(text, "out of memory") != NULL)
        quiet->out_of_memory = 1;
}

#endif

void sd_xml_quiet_begin(sd_xml_quiet *quiet)
{
#if LIBXML_VERSION < 21300
    quiet->out_of_memory = 0;
    quiet->saved_structured = xmlStructuredError;
    quiet->saved_structured_context = xmlStructuredErrorContext;
    quiet->saved_generic = xmlGenericError;
    quiet->saved_generic_context = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(quiet, quiet_structured);
    xmlSetGenericErrorFunc(quiet, quiet_generic);
#else
    memset(quiet, 0, sizeof *quiet);
#endif
}

sd_status sd_xml_quiet_end(sd_xml_quiet *quiet, sd_status status, sd_model **model, const char *source,
                           sd_error *err)
{
#if LIBXML_VERSION < 21300
    xmlSetStructuredErrorFunc(quiet->saved_structured_context, quiet->saved_structured);
    xmlSetGenericErrorFunc(quiet->saved_generic_context, quiet->saved_generic);
#endif
    if (!quiet->out_of_memory || status == SD_E_MEMORY) return status;
    if (model != NULL && *model != NULL) {
        sd_model_free(*model);
        *model = NULL;
    }
    return sd_io_fail(err, SD_E_MEMORY, source, 0, "out of memory reading the XML");
}
