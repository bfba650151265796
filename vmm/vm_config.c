// SPDX-License-Identifier: MIT
/*
 * The VM's configuration (vmm/vm_config.h): where a value came from, for
 * errors found after its option was read (by cli/ as it parses, by
 * vm_run() as it checks the scheduling setup).
 */
#include "vmm/vm_config.h"
#include "util/log.h"

#include <errno.h>

int vm_origin_report(const struct vm_origin *o)
{
	if (o->file)
		pr_err("--config: %s: %s: refused (see the error above)", o->file, o->where);
	return -EINVAL;
}
