// SPDX-License-Identifier: MIT
/*
 * Domain XML in, the first two steps: parse the untrusted text with libxml2
 * (no network, no DTD, no entity expansion) and, when libvirt's schemas are
 * installed, validate against libvirt's own domain.rng so a schema error is
 * libvirt's. Errors carry the file, line and element libxml2 reports.
 */
#include "cli/domain_util.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct schema_error {
	const char *file;	/* when libxml2 names none */
	char *buf;
	size_t len;
	bool set;
	bool located;		/* buf has a line and an element */
};

/*
 * The first message libxml2 reports is the one shown; RelaxNG's first one
 * often has no node ("Extra element vcpu in interleave"), so the line and
 * element come from the first that has one.
 */
static void first_error(void *opaque, xmlErrorPtr e)
{
	struct schema_error *se = opaque;
	const xmlNode *node = e ? e->node : NULL;
	char msg[512], first[512];
	size_t n;

	if (!e || !e->message || (se->set && (se->located || !node)))
		return;
	snprintf(msg, sizeof(msg), "%s", e->message);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	if (se->set) {
		/* Keep the first message, add the location. */
		const char *colon = strstr(se->buf, ": ");

		snprintf(first, sizeof(first), "%s", colon ? colon + 2 : se->buf);
		snprintf(msg, sizeof(msg), "%s", first);
	}
	snprintf(se->buf, se->len, "%s:%d: %s%s%s%s", e->file ? e->file : se->file,
		 node ? (int)xmlGetLineNo(node) : e->line, node ? "<" : "",
		 node ? (const char *)node->name : "", node ? ">: " : "", msg);
	se->set = true;
	se->located = node != NULL;
}

/* libvirt's schema when it is installed: 0 valid or no schema, -EINVAL invalid. */
int domain_libvirt_validate(xmlDoc *doc, const char *name, char *err, size_t errlen)
{
	const char *path = getenv("CAPVISOR_LIBVIRT_SCHEMA") ?: DOMAIN_LIBVIRT_SCHEMA;
	struct schema_error se = { name, err, errlen, false, false };
	xmlRelaxNGParserCtxt *pc;
	xmlRelaxNGValidCtxt *vc;
	xmlRelaxNG *schema;
	int rc;

	if (!*path || access(path, R_OK))
		return 0;
	pc = xmlRelaxNGNewParserCtxt(path);
	schema = pc ? xmlRelaxNGParse(pc) : NULL;
	xmlRelaxNGFreeParserCtxt(pc);
	if (!schema) {
		snprintf(err, errlen, "%s: libvirt's schema does not load", path);
		return -EINVAL;
	}
	vc = xmlRelaxNGNewValidCtxt(schema);
	if (!vc) {
		xmlRelaxNGFree(schema);
		return -ENOMEM;
	}
	xmlRelaxNGSetValidStructuredErrors(vc, first_error, &se);
	rc = xmlRelaxNGValidateDoc(vc, doc);
	xmlRelaxNGFreeValidCtxt(vc);
	xmlRelaxNGFree(schema);
	if (rc && !se.set)
		snprintf(err, errlen, "%s: does not validate against libvirt's schema", name);
	return rc ? -EINVAL : 0;
}

xmlDoc *domain_read_doc(const char *xml, size_t len, const char *name, char *err, size_t errlen)
{
	xmlParserCtxt *pc = xmlNewParserCtxt();
	struct schema_error se = { name, err, errlen, false, false };
	xmlDoc *doc;

	if (!pc) {
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	/* No network, no DTD loading, no entity substitution: the file is untrusted. */
	xmlSetStructuredErrorFunc(&se, first_error);
	doc = xmlCtxtReadMemory(pc, xml, (int)len, name, NULL,
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlSetStructuredErrorFunc(NULL, NULL);
	if (!doc && !se.set)
		snprintf(err, errlen, "%s: not well-formed XML", name);
	else if (doc && (doc->intSubset || doc->extSubset)) {
		/* libvirt's XML has none; a DTD only brings entities to expand. */
		snprintf(err, errlen, "%s: <!DOCTYPE> is not accepted in domain XML", name);
		xmlFreeDoc(doc);
		doc = NULL;
	} else if (doc && !xmlDocGetRootElement(doc)) {
		snprintf(err, errlen, "%s: no root element", name);
		xmlFreeDoc(doc);
		doc = NULL;
	}
	xmlFreeParserCtxt(pc);
	return doc;
}

