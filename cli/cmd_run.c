// SPDX-License-Identifier: MIT
/*
 * `capvisor run`: the command line of one VM. Parses the options (and the
 * --config and --domain files they name) into struct vm_config, answers
 * --help and --version, and hands the VM to vmm/'s vm_run() with the one
 * thing of cli/ it needs: writing the VM as libvirt domain XML.
 */
#include "cli/commands.h"
#include "cli/domain.h"
#include "cli/options.h"
#include "util/log.h"
#include "vmm/vm_run.h"

#include <stdio.h>

/* --dump-domain: the QoS the options gave the VM. */
static int write_domain(FILE *f, const struct vm_config *cfg, const struct vcpu_qos *qos,
			const struct vm_qos *vm_qos, char *err, size_t errlen)
{
	struct domain_tune tune;

	domain_tune_of(vm_qos, &tune);
	return domain_write(f, cfg, qos, cfg->domain, &tune, err, errlen);
}

/* query-domain-xml: the QoS the control socket sees now. */
static int write_domain_string(char **xml, const struct vm_config *cfg,
			       const struct vcpu_qos *qos, const struct vm_qos *vm_qos,
			       char *err, size_t errlen)
{
	struct domain_tune tune;

	domain_tune_of(vm_qos, &tune);
	return domain_write_string(xml, cfg, qos, cfg->domain, &tune, err, errlen);
}

static const struct vm_run_domain_ops domain_ops = {
	.write = write_domain,
	.write_string = write_domain_string,
};

int cmd_run(int argc, char **argv)
{
	struct vm_config cfg;
	int status = 0;

	vm_config_init(&cfg);
	if (vm_config_parse(&cfg, argc, argv)) {
		vm_config_free(&cfg);	/* --config and --domain files loaded before the error */
		return RUN_EXIT_USAGE;
	}
	if (cfg.help)
		vm_config_usage(stdout);
	else if (cfg.version)
		cmd_print_version();
	else {
		if (cfg.verbose)
			log_set_level(cfg.verbose > 1 ? LOG_DEBUG : LOG_INFO);
		status = vm_run(&cfg, &domain_ops);
	}
	vm_config_free(&cfg);
	return status;
}
