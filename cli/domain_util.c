// SPDX-License-Identifier: MIT
/*
 * Helpers of the domain XML reader: errors that say where in the file, the
 * argument vector with the origin of each entry, attribute and text access
 * that refuse what they do not expect.
 */
#include "cli/domain_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int domain_fail(struct domain_ctx *c, const xmlNode *n, const char *fmt, ...)
{
	va_list ap;
	int len;

	len = snprintf(c->err, c->errlen, "%s:%ld: <%s>: ", c->file,
		       n ? xmlGetLineNo(n) : 0L, n ? (const char *)n->name : "domain");
	va_start(ap, fmt);
	if (len >= 0 && (size_t)len < c->errlen)
		vsnprintf(c->err + len, c->errlen - (size_t)len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int domain_push(struct domain_ctx *c, const xmlNode *n, const char *opt, const char *value)
{
	struct vmdef_args *a = &c->out->args;
	struct domain_origin *o;
	char **argv;
	char *s;

	if (value ? asprintf(&s, "--%s=%s", opt, value) < 0 : asprintf(&s, "--%s", opt) < 0)
		return -ENOMEM;
	argv = realloc(a->argv, sizeof(*argv) * (size_t)(a->argc + 2));
	o = realloc(c->out->origin, sizeof(*o) * (size_t)(a->argc + 1));
	if (argv)
		a->argv = argv;
	if (o)
		c->out->origin = o;
	if (!argv || !o) {
		free(s);
		return -ENOMEM;
	}
	o[a->argc].line = (int)xmlGetLineNo(n);
	snprintf(o[a->argc].element, sizeof(o[a->argc].element), "%s", (const char *)n->name);
	a->argv[a->argc++] = s;
	a->argv[a->argc] = NULL;
	return 0;
}

int domain_check_attrs(struct domain_ctx *c, const xmlNode *n, const char *const *allowed)
{
	for (const xmlAttr *a = n->properties; a; a = a->next) {
		bool ok = false;

		for (size_t i = 0; allowed && allowed[i]; i++)
			ok |= !strcmp((const char *)a->name, allowed[i]);
		if (!ok)
			return domain_fail(c, n, "attribute '%s' is not supported by capvisor",
					   (const char *)a->name);
	}
	return 0;
}

char *domain_attr(const xmlNode *n, const char *name)
{
	xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)name);
	char *s;

	if (!v)
		return NULL;
	s = strdup((const char *)v);
	xmlFree(v);
	return s;
}

char *domain_text(struct domain_ctx *c, const xmlNode *n)
{
	xmlChar *v;
	char *s, *start, *end;

	for (const xmlNode *k = n->children; k; k = k->next)
		if (k->type == XML_ELEMENT_NODE) {
			domain_fail(c, n, "expected text, found element <%s>", (const char *)k->name);
			return NULL;
		}
	v = xmlNodeGetContent(n);
	if (!v) {
		domain_fail(c, n, "out of memory");
		return NULL;
	}
	start = (char *)v;
	while (isspace((unsigned char)*start))
		start++;
	end = start + strlen(start);
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	if ((size_t)(end - start) > DOMAIN_TEXT_MAX) {
		domain_fail(c, n, "text longer than %d bytes", DOMAIN_TEXT_MAX);
		xmlFree(v);
		return NULL;
	}
	s = strndup(start, (size_t)(end - start));
	xmlFree(v);
	if (!s)
		domain_fail(c, n, "out of memory");
	return s;
}

int domain_uint(struct domain_ctx *c, const xmlNode *n, const char *s, uint64_t max,
		const char *what, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !isdigit((unsigned char)*s))
		return domain_fail(c, n, "%s '%s' is not a non-negative integer", what,
				   s ? s : "");
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return domain_fail(c, n, "%s '%s' is not a non-negative integer", what, s);
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return domain_fail(c, n, "%s '%s' is too large (at most %llu)", what, s,
					   (unsigned long long)max);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

bool domain_is(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}
