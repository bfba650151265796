/* SPDX-License-Identifier: MIT */
/*
 * libvirt domain XML in and out (docs/libvirt.md).
 *
 * In: domain_load() turns a <domain> into the argument vector of `capvisor
 * run` options it means ("--vcpus=4", "--mem=268435456", "--vcpu=0:cluster=
 * cpu1", ...), the same way a VM definition file does (cli/vmdef.h), so there
 * is one validation path. Every argument remembers the element and line it
 * came from, so an option that rejects its value can say where in the XML
 * it was. What the XML says that no option carries (name, uuid, title,
 * description, foreign <metadata>) is kept in struct domain_info and written
 * back out. Anything that would change what the guest gets and capvisor
 * cannot do is refused, naming the element and its line.
 *
 * Out: domain_write() writes the VM as it would run (struct vm_config plus
 * the per-vCPU QoS in effect) as domain XML that libvirt's schema accepts;
 * what libvirt cannot say goes in <metadata> under DOMAIN_NS.
 */
#ifndef CAPVISOR_DOMAIN_H
#define CAPVISOR_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/vmdef.h"

struct vm_config;
struct vcpu_qos;
struct vm_qos;

/* capvisor's namespace in <metadata>, its one top-level element and schema. */
#define DOMAIN_NS		"https://capvisor.dev/schemas/domain/1.0"
#define DOMAIN_NS_PREFIX	"capvisor"
#define DOMAIN_META_ELEMENT	"vm"
/* libvirt's own schema, used first when installed; CAPVISOR_LIBVIRT_SCHEMA overrides. */
#define DOMAIN_LIBVIRT_SCHEMA	"/usr/share/libvirt/schemas/domain.rng"
#define DOMAIN_MAX_BYTES	(1 << 20)
#define DOMAIN_NAME_MAX		64
#define DOMAIN_TEXT_MAX		4096	/* title, cmdline, paths */

struct domain_info {
	char *name;
	char *uuid;			/* as written, lower case; NULL when absent */
	char *title, *description;	/* NULL when absent */
	char *foreign_metadata;		/* other namespaces' <metadata> children, serialized */
};

/* One argument of the vector and where in the XML it came from. */
struct domain_origin {
	int line;
	char element[32];
};

struct domain_args {
	struct vmdef_args args;		/* every entry is one option: "--key=value" or "--flag" */
	struct domain_origin *origin;	/* origin[i] for args.argv[i] */
	struct domain_info info;
};

/*
 * Parse and translate. Returns 0, or -EINVAL/-ENOENT/-ENOMEM with err as
 * "FILE:LINE: <element>: reason" (or libvirt's schema error). No output is
 * kept on failure.
 */
int domain_load(const char *path, struct domain_args *out, char *err, size_t errlen);
/* The same from memory; name is used in error messages in place of a path. */
int domain_parse(const char *xml, size_t len, const char *name, struct domain_args *out,
		 char *err, size_t errlen);
void domain_args_free(struct domain_args *d);

/*
 * The VM-level QoS of a VM being written: the VM weight (<shares>) and cap
 * (<global_period>/<global_quota>) in libvirt's units (shares;
 * microseconds), 0 = not set, a per-vCPU cap the same for every vCPU
 * (<period>/<quota>), and the VM's groups (vm_qos->groups, in capvisor's
 * metadata; NULL: none). domain_tune_of() fills it from a struct vm_qos.
 */
struct domain_tune {
	unsigned int vm_weight;
	unsigned long long vm_quota_us, vm_period_us;
	unsigned long long vcpu_quota_us, vcpu_period_us;	/* the same for every vCPU */
	const struct vm_qos *vm_qos;
};

/* The VM weight when not the default, its cap, and vq's groups (vq must outlive t). */
void domain_tune_of(const struct vm_qos *vq, struct domain_tune *t);

/*
 * Write the VM: cfg as parsed, qos[0..cfg->nr_vcpus) as in effect (the
 * options' QoS at start, the live QoS over the control socket), info from
 * the --domain it came from (NULL: a name "capvisor" and no uuid), tune the
 * VM-level weight and caps (NULL: none).
 * Returns 0, or -EINVAL with err filled (a host spec that does not parse).
 */
int domain_write(FILE *f, const struct vm_config *cfg, const struct vcpu_qos *qos,
		 const struct domain_info *info, const struct domain_tune *tune, char *err,
		 size_t errlen);
/* The same into a malloc'ed, NUL-terminated string (*xml, free() it). */
int domain_write_string(char **xml, const struct vm_config *cfg, const struct vcpu_qos *qos,
			const struct domain_info *info, const struct domain_tune *tune, char *err,
			size_t errlen);

#endif
