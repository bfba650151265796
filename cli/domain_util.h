/* SPDX-License-Identifier: MIT */
/*
 * Shared by the parts of the domain XML reader (cli/domain_in.c for libvirt's
 * elements, cli/domain_meta.c for capvisor's <metadata> element): the parse
 * context, errors that name the element and line, and the argument vector
 * being built.
 */
#ifndef CAPVISOR_DOMAIN_UTIL_H
#define CAPVISOR_DOMAIN_UTIL_H

#include "cli/domain.h"
#include "dispatch/hostspec.h"
#include "dispatch/qosspec.h"

#include <libxml/tree.h>
#include <stdbool.h>
#include <stdint.h>

struct domain_ctx {
	const char *file;		/* for error messages */
	struct domain_args *out;
	char *err;
	size_t errlen;
	unsigned int nr_vcpus;		/* from <vcpu>, 0 until seen */
	bool emulated_host;		/* capvisor metadata gives --host */
	struct host_spec host;		/* that host, parsed */
	struct vm_qos groups;		/* capvisor:group elements, parsed (names checked) */
	const xmlNode *vcpupin;		/* first <vcpupin>, for the check against it */
	const xmlNode *console;		/* the <serial> or <console> that set --console */
	const xmlNode *meta;		/* capvisor's element in <metadata>, if any */
};

/* Fills err with "FILE:LINE: <element>: reason" and returns -EINVAL. */
int domain_fail(struct domain_ctx *c, const xmlNode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends "--opt=value" (value NULL: "--opt") with n as its origin. */
int domain_push(struct domain_ctx *c, const xmlNode *n, const char *opt, const char *value);
/* Refuses an attribute of n that is not in allowed (NULL-terminated). */
int domain_check_attrs(struct domain_ctx *c, const xmlNode *n, const char *const *allowed);
/* The attribute (no namespace) as a malloc'ed string, or NULL when absent. */
char *domain_attr(const xmlNode *n, const char *name);
/* The element's text, trimmed of surrounding blanks; malloc'ed, never NULL on success. */
char *domain_text(struct domain_ctx *c, const xmlNode *n);
/* A decimal integer of at most max, no sign; the error names n and what. */
int domain_uint(struct domain_ctx *c, const xmlNode *n, const char *s, uint64_t max,
		const char *what, uint64_t *out);
bool domain_is(const xmlNode *n, const char *name);

/* Parse untrusted XML (cli/domain_schema.c); NULL with err filled. */
xmlDoc *domain_read_doc(const char *xml, size_t len, const char *name, char *err,
			size_t errlen);
/* libvirt's schema when installed: 0 valid or no schema, -EINVAL with err filled. */
int domain_libvirt_validate(xmlDoc *doc, const char *name, char *err, size_t errlen);
/*
 * One host CPU as the cluster of the default emulated host that is exactly
 * it; "" (no affinity) for every host CPU capvisor may use.
 */
int domain_cpuset_cluster(struct domain_ctx *c, const xmlNode *n, const char *cpuset,
			  char *cluster, size_t len);
/* <cputune> and <devices> (cli/domain_tune.c). */
int domain_cputune(struct domain_ctx *c, const xmlNode *n);
int domain_devices(struct domain_ctx *c, const xmlNode *n);
/* capvisor's <metadata> element (cli/domain_meta.c). */
int domain_meta_parse(struct domain_ctx *c, const xmlNode *vm);	/* all but <vcpu> */
int domain_meta_vcpus(struct domain_ctx *c, const xmlNode *vm);	/* the <vcpu> entries */

#endif
