/*
 * io/xml_read.h — XML text to a libxml2 document, for every XML model format of the io layer:
 * quiet (every libxml2 message comes back in the sd_error with file:line, none reaches stderr) and
 * closed (no network, no external entities or DTDs loaded, no entity substitution).
 *
 * Private to the library; not installed.
 */
#ifndef SOADYN_IO_XML_READ_H
#define SOADYN_IO_XML_READ_H

#include <stddef.h>

#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <soadyn/model.h>

/* Parse `length` bytes of XML. On success *doc is a document the caller frees with xmlFreeDoc();
 * otherwise *doc is NULL and err says "source:line: malformed XML: <libxml2's first fatal error>".
 * Safe to call from several threads at once. */
sd_status sd_xml_read(const char *xml, size_t length, const char *source, xmlDoc **doc, sd_error *err);

/* A reader's whole use of libxml2 (its parse and every attribute it reads from the tree) between
 * sd_xml_quiet_begin() and sd_xml_quiet_end(): libxml2's global error handlers of the calling thread
 * are replaced meanwhile, so that nothing it raises reaches stderr, and an allocation failure
 * inside it is remembered. An attribute read that runs out of memory answers NULL, which a reader
 * takes for "absent": sd_xml_quiet_end() then turns the reader's outcome, a failure (a missing
 * attribute) or a success (a default used), into SD_E_MEMORY "source: out of memory reading the
 * XML", freeing *model. Before libxml2 2.13 only; from 2.13 on libxml2 raises nothing there. */
typedef struct sd_xml_quiet {
    xmlStructuredErrorFunc saved_structured;
    xmlGenericErrorFunc saved_generic;
    void *saved_structured_context, *saved_generic_context;
    int out_of_memory;
} sd_xml_quiet;

void sd_xml_quiet_begin(sd_xml_quiet *quiet);
sd_status sd_xml_quiet_end(sd_xml_quiet *quiet, sd_status status, sd_model **model, const char *source,
                           sd_error *err);

#endif /* SOADYN_IO_XML_READ_H */
