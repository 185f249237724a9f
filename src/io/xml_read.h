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

#include <soadyn/model.h>

/* Parse `length` bytes of XML. On success *doc is a document the caller frees with xmlFreeDoc();
 * otherwise *doc is NULL and err says "source:line: malformed XML: <libxml2's first fatal error>".
 * Safe to call from several threads at once. */
sd_status sd_xml_read(const char *xml, size_t length, const char *source, xmlDoc **doc, sd_error *err);

#endif /* SOADYN_IO_XML_READ_H */
