/* The few S3 XML answers the S3 FileIO reads (ListBucketResult,
 * DeleteResult, Error), through one small strict parser: elements, text,
 * attributes (skipped), the XML declaration and comments; the five named
 * entities and numeric character references are decoded. Anything else
 * (unbalanced tags, stray '<', unknown entities, CDATA, DOCTYPE) is an
 * error, never a crash. */
#ifndef PM_S3_XML_H
#define PM_S3_XML_H

#include "pm_common.h"

/* Called for every closed element: depth 1 is the root; `text` is the
 * decoded text of an element without child elements (NULL for one with
 * children). parent is the enclosing element's name ("" for the root). A
 * nonzero return stops the walk and is returned. */
typedef int (*pm_xml_cb)(void *ctx, int depth, const char *parent, const char *name, const char *text,
                         size_t text_len);

/* Walks the document; PAIMON_IO with `what` in the message for bad XML.
 * *root_out (optional) gets the root element's name, truncated to 63. */
int pm_xml_walk(const char *data, size_t n, pm_xml_cb cb, void *ctx, char root_out[64], const char *what,
                pm_err *e);

/* Appends s with &, <, >, " and ' escaped. */
int pm_xml_escape(pm_buf *b, const char *s);

#endif
