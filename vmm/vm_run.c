// SPDX-License-Identifier: MIT
/*
 * One VM from its configuration (vmm/vm_run.h): load the kernel, build the
 * VM and run it until the guest powers off or reboots, fails, or a signal
 * ends it (SIGINT, SIGTERM, SIGQUIT, SIGHUP).
 * The main thread only runs the event loop (stop signals through a pipe,
 * util/stopsig.h; console input); the vCPUs run on their own threads.
 */
#include "vmm/console.h"
#include "vmm/emulator.h"
#include "util/evloop.h"
#include "util/stopsig.h"
#include "capvisor/layout.h"
#include "util/log.h"
#include "util/path_reaper.h"
#include "util/paths.h"
#include "util/privs.h"
#include "vmm/qmp_attach.h"
#include "util/sandbox.h"
#include "vmm/boot/guest_blob.h"
#include "vmm/kvm/vm.h"
#include "vmm/join.h"
#include "vmm/vm_run.h"
#include "vmm/vm_sched.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE_SIZE		(1ULL << 30)

struct file_buf {
	uint8_t *data;
	size_t len;
};

static int read_file(const char *opt, const char *path, struct file_buf *out)
{
	char err[512];
	struct stat st;
	int fd = path_open_input(opt, path, err, sizeof(err));
	size_t done = 0;

	if (fd < 0) {
		pr_err("%s", err);
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > MAX_FILE_SIZE) {
		pr_err("%s: '%s' is empty or larger than 1 GiB (expected a kernel or initrd image)",
		       opt, path);
		close(fd);
		return -EINVAL;
	}
	out->len = (size_t)st.st_size;
	out->data = malloc(out->len);
	while (out->data && done < out->len) {
		ssize_t n = read(fd, out->data + done, out->len - done);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	if (!out->data || done != out->len) {
		pr_err("%s: cannot read '%s'", opt, path);
		free(out->data);
		out->data = NULL;
		return -EIO;
	}
	return 0;
}

static int dump_acpi(const struct vm_config *cfg, const struct vm_sched *vs)
{
	struct acpi_vm_desc desc;
	struct acpi_tables t;
	void *buf = calloc(1, LAYOUT_ACPI_SIZE);
	int ret;

	if (!buf)
		return RUN_EXIT_HOST;
	vm_sched_acpi_desc(vs, &desc);
	ret = vm_acpi_build(&desc, buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, &t);
	if (!ret) {
		ret = acpi_dump_tables(&t, buf, cfg->dump_acpi_dir);
		if (ret)
			pr_err("--dump-acpi: cannot write the tables to '%s': %s",
			       cfg->dump_acpi_dir, strerror(-ret));
	}
	free(buf);
	return ret ? RUN_EXIT_USAGE : 0;
}

/* --dump-domain: the VM as it would run, with the QoS the options gave it. */
/* f: stdout, or the file opened (not yet emptied) when the options were checked. */
static int dump_domain(const struct vm_config *cfg, const struct vm_run_domain_ops *dom,
		       const struct vm_sched *vs, FILE *f)
{
	bool to_stdout = f == stdout;
	char err[512];
	int rc = 0;

	if (!to_stdout && ftruncate(fileno(f), 0) < 0) {
		snprintf(err, sizeof(err), "cannot truncate '%s': %s", cfg->dump_domain,
			 strerror(errno));
		rc = -EIO;
	}
	rc = rc ?: dom->write(f, cfg, vs->qos, &vs->vm_qos, err, sizeof(err));
	if (!to_stdout && fclose(f) && !rc) {
		snprintf(err, sizeof(err), "cannot write '%s': %s", cfg->dump_domain,
			 strerror(errno));
		rc = -EIO;
	}
	if (rc)
		pr_err("--dump-domain: %s", err);
	return rc ? RUN_EXIT_USAGE : 0;
}

struct run_signals {
	struct stop_signals sig;
	struct vm *vm;
};

static void on_signal(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct run_signals *rs = opaque;
	int signo = stop_signals_next(&rs->sig);

	(void)loop;
	(void)fd;
	(void)events;
	if (signo)
		vm_request_exit(rs->vm, VM_EXIT_SIGNAL, signo, "stopped by %s", strsignal(signo));
}

/*
 * SIGINT, SIGTERM, SIGQUIT and SIGHUP (the terminal went away) end the VM
 * the same way: summary, statistics, socket removed, status 128+N. A SIGHUP
 * ignored when we started (nohup) stays ignored.
 */
static int setup_signals(struct run_signals *rs, struct vm *vm)
{
	int signo[STOPSIG_MAX] = { SIGINT, SIGTERM, SIGQUIT, SIGHUP };
	unsigned int n = 4;
	struct sigaction hup;
	int rc;

	if (!sigaction(SIGHUP, NULL, &hup) && hup.sa_handler == SIG_IGN)
		n = 3;
	rs->vm = vm;
	/*
	 * Blocked before the vCPU threads exist, so they inherit it; the main
	 * thread takes them once they run (stop_signals_unblock()).
	 */
	rc = stop_signals_open(&rs->sig, signo, n);
	signal(SIGPIPE, SIG_IGN);	/* a closed console must not kill the VMM */
	if (rc || evloop_add_fd(vm->loop, rs->sig.fd, EPOLLIN, on_signal, rs)) {
		pr_err("stop signals: %s", strerror(rc ? -rc : errno));
		stop_signals_close(&rs->sig);
		return -1;
	}
	return 0;
}

struct run_ctx {
	struct vm_config *cfg;			/* the caller's */
	const struct vm_run_domain_ops *dom;	/* may be NULL */
	struct file_buf kernel, initrd;
	struct vm *vm;
	struct vm_sched sched;
	bool sched_ready;
	struct qmp_attachment *qmp;
	struct vm_join *join;		/* --join: the host schedules the vCPUs */
	struct path_reaper sock_reaper;	/* removes the socket after --user */
	struct console con;
	struct run_signals sig;
	bool sig_ready;
	int stats_fd;			/* --stats-json, opened at start */
	FILE *dump_domain_f;		/* --dump-domain, opened at start; dump_domain() closes it */
	bool dump_dir_created;		/* --dump-acpi made it: remove it if we give up */
};

/*
 * --join: the host's spec and engine apply; CPPC and the guest's hints are
 * relayed over the join protocol (docs/host.md, "CPPC" and "Hints").
 */
static int check_join(struct run_ctx *c)
{
	const char *bad = c->cfg->host_spec ? "--host (the host's spec applies)" :
			  c->cfg->sched == SCHED_KIND_HOST ? "--sched host" :
			  c->cfg->vm_qos.nr_groups ? "--group (not relayed to a host yet)" : NULL;

	if (!c->cfg->join)
		return 0;
	if (bad) {
		pr_err("--join: %s cannot be used with it", bad);
		return -EINVAL;
	}
	return 0;
}

/* Say hello to the host: its refusal (admission) is the VM's, exit status 2. */
static int join_host(struct run_ctx *c, const struct vcpu_qos *qos, char *err, size_t errlen)
{
	char name[JOIN_NAME_MAX + 1];
	bool refused;

	snprintf(name, sizeof(name), "%s", c->cfg->name ? c->cfg->name : "");
	if (!c->cfg->name)
		snprintf(name, sizeof(name), "vm%d", (int)getpid());
	c->join = vm_join_connect(c->cfg->join, name, c->cfg->nr_vcpus, qos, &c->cfg->vm_qos.vm,
				  &refused, err, errlen);
	if (!c->join)
		return -EINVAL;
	return vm_sched_join(&c->sched, c->join, err, errlen);
}

/* Host, per-vCPU QoS and admission: every scheduling error before anything is built. */
static int prepare_sched(struct run_ctx *c)
{
	int jrc = check_join(c);
	struct vm_sched_config sc = {
		.mode = c->cfg->sched == SCHED_KIND_HOST || c->cfg->join ? VM_SCHED_HOST :
			VM_SCHED_CAPVISOR,
		.joined = c->cfg->join != NULL,
		.tick_ns = c->cfg->tick_ns,
		.window_ns = c->cfg->window_ns,
		.slice_ns = c->cfg->slice_ns,
		.no_cppc = c->cfg->no_cppc,
	};
	struct vcpu_qos *qos = calloc(c->cfg->nr_vcpus, sizeof(*qos));
	char err[512];
	int rc = 0;
	const struct vm_origin *origin = NULL;

	if (!qos || jrc) {
		free(qos);
		return jrc ? jrc : -ENOMEM;
	}
	for (unsigned int i = 0; i < c->cfg->nr_vcpus; i++)
		vcpu_qos_default(&qos[i]);
	if (c->cfg->host_spec) {
		rc = host_spec_parse(c->cfg->host_spec, &sc.host, err, sizeof(err));
		sc.host_set = !rc;
		origin = &c->cfg->host_origin;
	}
	for (unsigned int i = 0; !rc && i < c->cfg->nr_vcpu_specs; i++) {
		rc = vcpu_spec_apply(c->cfg->vcpu_specs[i], c->cfg->nr_vcpus, qos, err, sizeof(err));
		origin = &c->cfg->vcpu_origin[i];
	}
	if (!rc) {
		rc = vm_sched_prepare(&c->sched, &sc, qos, &c->cfg->vm_qos, c->cfg->nr_vcpus, err,
				      sizeof(err));
		origin = NULL;	/* the whole picture: no single value to point at */
	}
	if (!rc && c->cfg->join && !c->cfg->dump_acpi_dir && !c->cfg->dump_domain)
		rc = join_host(c, qos, err, sizeof(err));
	c->sched_ready = true;	/* vm_sched_free() is safe on a partial prepare */
	if (rc) {
		pr_err("%s", err);
		if (origin)
			vm_origin_report(origin);
	}
	free(qos);
	return rc;
}

/* The filters' mode, before any thread starts; each thread installs its own. */
static int setup_sandbox(struct run_ctx *c)
{
	struct sandbox_config sc = {
		.mode = c->cfg->seccomp,
		.mode_set = c->cfg->seccomp_set,
		.api_socket = c->cfg->api_socket != NULL,
		.rejoin = c->cfg->join != NULL,
	};
	char err[256];

	if (sandbox_init(&sc, err, sizeof(err))) {
		pr_err("%s", err);
		return RUN_EXIT_HOST;
	}
	return 0;
}

/* query-domain-xml: the VM as parsed, with the QoS the control socket sees now. */
static int live_domain_xml(void *opaque, const struct vcpu_qos *live,
			   const struct vm_qos *live_vm, char **xml, char *err, size_t errlen)
{
	const struct run_ctx *c = opaque;

	return c->dom->write_string(xml, c->cfg, live, live_vm, err, errlen);
}

/* Control socket, privileges, the sandbox: the last steps before any thread starts. */
static int attach_control(struct run_ctx *c)
{
	struct privs_opts po = {
		.keep_sys_nice = c->cfg->sched == SCHED_KIND_HOST,
		.user = c->cfg->user,
	};
	char err[512];

	if (c->cfg->api_socket) {
		c->qmp = qmp_attach_vm(c->vm, &c->sched, c->cfg->api_socket, err, sizeof(err));
		if (!c->qmp) {
			pr_err("--api-socket: %s", err);
			return RUN_EXIT_USAGE;
		}
		if (c->dom)
			qmp_attach_set_domain(c->qmp, live_domain_xml, c);
		if (c->join)
			vm_join_set_events(c->join, qmp_attach_emit, c->qmp);
		if (c->cfg->user &&
		    path_reaper_start(&c->sock_reaper, c->cfg->api_socket, err, sizeof(err))) {
			pr_err("--api-socket: cannot arrange its removal after --user: %s", err);
			return RUN_EXIT_HOST;
		}
	}
	if (privs_drop(&po, err, sizeof(err))) {
		pr_err("dropping privileges: %s", err);
		return RUN_EXIT_HOST;
	}
	return setup_sandbox(c);
}

static int load_inputs(struct run_ctx *c)
{
	if (c->cfg->kernel) {
		if (read_file("--kernel", c->cfg->kernel, &c->kernel))
			return -1;
	} else {
		c->kernel.data = (uint8_t *)capvisor_guest_elf;
		c->kernel.len = (size_t)(capvisor_guest_elf_end - capvisor_guest_elf);
	}
	if (boot_detect(c->kernel.data, c->kernel.len) == KERNEL_UNKNOWN) {
		pr_err("--kernel: '%s' is neither an ELF with a PVH note nor a bzImage",
		       c->cfg->kernel ? c->cfg->kernel : "(embedded)");
		return -1;
	}
	if (c->cfg->initrd && read_file("--initrd", c->cfg->initrd, &c->initrd))
		return -1;
	return 0;
}

/*
 * The dispatcher and vCPU threads inherit the main thread's CPU mask when
 * they are created. With --emulator-cpus the dispatcher is created inside
 * the emulator set, the vCPU threads outside it (the dispatcher pins them to
 * their host CPUs as they run), and the main thread stays inside.
 */
static int start_threads(struct run_ctx *c, const struct boot_entry *entry)
{
	cpu_set_t emu, all;
	char err[256];
	int rc;

	if (!c->cfg->emulator_cpus)
		return vm_sched_start(&c->sched) || vm_start(c->vm, entry) ? RUN_EXIT_HOST : 0;
	if (emulator_cpus_parse(c->cfg->emulator_cpus, &emu, err, sizeof(err)) ||
	    emulator_pin_self(&emu, &all)) {
		pr_err("--emulator-cpus: cannot pin capvisor's threads to '%s'",
		       c->cfg->emulator_cpus);
		return RUN_EXIT_HOST;
	}
	rc = vm_sched_start(&c->sched);
	rc = rc ?: emulator_pin_self(&all, NULL);
	rc = rc ?: vm_start(c->vm, entry);
	rc = rc ?: emulator_pin_self(&emu, NULL);
	return rc ? RUN_EXIT_HOST : 0;
}

/* Build the VM and its devices, load the kernel, start the vCPUs: 0, or an exit status. */
static int build_vm(struct run_ctx *c)
{
	struct vm_params p = {
		.nr_vcpus = c->cfg->nr_vcpus,
		.mem_size = c->cfg->mem_size,
		.cpu_hide = c->cfg->cpu_hide_set ? c->cfg->cpu_hide : cpuid_default_hide(),
		/* APERF/MPERF are served from the dispatcher's (or the host's) accounts. */
		.aperfmperf = !c->cfg->no_cppc && (c->cfg->sched == SCHED_KIND_CAPVISOR ||
						   c->cfg->join),
	};
	struct acpi_vm_desc desc;
	struct boot_input in;
	struct boot_entry entry;
	char hidden[256], err[512];
	int rc;

	if (c->stats_fd >= 0 && ftruncate(c->stats_fd, 0) < 0) {
		pr_err("--stats-json: cannot truncate '%s': %s", c->cfg->stats_json, strerror(errno));
		return RUN_EXIT_USAGE;
	}
	cpuid_format_set(p.cpu_hide, hidden, sizeof(hidden));
	pr_info("%u vCPUs, %llu MiB, hidden CPU features: %s", p.nr_vcpus,
		(unsigned long long)(p.mem_size >> 20), hidden);
	c->vm = vm_create(&p);
	if (!c->vm)
		return RUN_EXIT_HOST;
	if (vm_setup_devices(c->vm, c->con.out_fd))
		return RUN_EXIT_HOST;
	if (vm_sched_attach(&c->sched, c->vm, err, sizeof(err))) {
		pr_err("%s", err);
		return RUN_EXIT_HOST;
	}
	if (c->join && vm_join_attach(c->join, c->vm))
		return RUN_EXIT_HOST;
	vm_sched_acpi_desc(&c->sched, &desc);
	if (vm_setup_acpi(c->vm, &desc))
		return RUN_EXIT_HOST;
	in = (struct boot_input){
		.kernel = c->kernel.data, .kernel_len = c->kernel.len,
		.initrd = c->initrd.data, .initrd_len = c->initrd.len,
		.cmdline = c->cfg->cmdline, .rsdp_gpa = c->vm->acpi.rsdp_gpa,
		.e820 = &c->vm->e820, .mem = &c->vm->mem,
	};
	if (boot_load(&in, &entry))
		return RUN_EXIT_USAGE;
	if (setup_signals(&c->sig, c->vm))
		return RUN_EXIT_HOST;
	c->sig_ready = true;
	console_attach(&c->con, c->vm);
	rc = attach_control(c);
	if (rc)
		return rc;
	rc = start_threads(c, &entry);
	/* Every thread that runs KVM_RUN exists: only this one takes a stop signal. */
	stop_signals_unblock(&c->sig.sig);
	/* Last: a filter also binds the threads its thread creates later. */
	if (!rc && sandbox_enter(SANDBOX_MAIN))
		return RUN_EXIT_HOST;
	return rc;
}

static int report_exit(struct vm *vm)
{
	switch (vm_exit_kind(vm)) {
	case VM_EXIT_POWEROFF:
	case VM_EXIT_REBOOT:
		fprintf(stderr, "capvisor: %s\n", vm->exit_reason);
		return RUN_EXIT_GUEST_OK;
	case VM_EXIT_SIGNAL:
		fprintf(stderr, "capvisor: %s\n", vm->exit_reason);
		return RUN_EXIT_SIGNAL_BASE + vm->exit_signal;
	default:
		fprintf(stderr, "capvisor: %s\n", vm->exit_reason);
		return RUN_EXIT_GUEST_FAILED;
	}
}

static void log_counters(const struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = vm->vcpus[i];

		pr_info("vCPU %u: %llu exits (%llu I/O, %llu MMIO, %llu MSR), %llu kicks", i,
			(unsigned long long)v->nr_exits, (unsigned long long)v->nr_io_exits,
			(unsigned long long)v->nr_mmio_exits, (unsigned long long)v->nr_msr_exits,
			(unsigned long long)v->nr_kicks);
	}
	pr_info("unclaimed accesses: %llu I/O, %llu MMIO",
		(unsigned long long)bus_unclaimed_count(vm->pio),
		(unsigned long long)bus_unclaimed_count(vm->mmio));
}

/* The per-vCPU summary (stderr) and, with --stats-json, the same as JSON. */
static void report_sched(struct run_ctx *c)
{
	vm_sched_print_summary(&c->sched, stderr);
	if (c->stats_fd >= 0 && vm_sched_write_stats_json(&c->sched, c->stats_fd))
		pr_err("--stats-json: writing '%s' failed: %s", c->cfg->stats_json, strerror(errno));
}

/*
 * Every path that is written or bound later is checked now, so that a bad
 * one stops us before anything runs rather than after the guest did.
 */
static int check_output_paths(struct run_ctx *c)
{
	char err[512];

	if (c->cfg->dump_acpi_dir || c->cfg->dump_domain) {
		/* Nothing runs: the tables or the domain are written and we exit. */
		int rc = c->cfg->dump_acpi_dir ?
			 path_check_output_dir("--dump-acpi", c->cfg->dump_acpi_dir, err,
					       sizeof(err)) : 0;

		if (rc < 0)
			goto fail;
		c->dump_dir_created = rc;
		if (c->cfg->dump_domain)
			c->dump_domain_f = !strcmp(c->cfg->dump_domain, "-") ? stdout :
				path_fopen_output_keep("--dump-domain", c->cfg->dump_domain, err,
						       sizeof(err));
		if (c->cfg->dump_domain && !c->dump_domain_f)
			goto fail;
		return 0;
	}
	if (c->cfg->api_socket &&
	    path_check_socket("--api-socket", c->cfg->api_socket, err, sizeof(err)))
		goto fail;
	if (c->cfg->stats_json) {
		/* Emptied in build_vm(), once every other input was accepted. */
		c->stats_fd = path_open_output_keep("--stats-json", c->cfg->stats_json, err,
						    sizeof(err));
		if (c->stats_fd < 0)
			goto fail;
	}
	return 0;
fail:
	pr_err("%s", err);
	return -1;
}

static void cleanup(struct run_ctx *c)
{
	/* Release the vCPUs waiting at the dispatcher's gate before joining them. */
	if (c->sched_ready)
		vm_sched_stop(&c->sched);
	vm_join_stop(c->join);
	if (c->vm)
		vm_stop_vcpus(c->vm);
	qmp_detach_vm(c->qmp);
	path_reaper_finish(&c->sock_reaper);
	console_close(&c->con);
	vm_destroy(c->vm);
	vm_join_free(c->join);
	if (c->sched_ready)
		vm_sched_free(&c->sched);
	if (c->sig_ready)
		stop_signals_close(&c->sig.sig);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	if (c->dump_domain_f && c->dump_domain_f != stdout)
		fclose(c->dump_domain_f);
	if (c->cfg->kernel)
		free(c->kernel.data);
	free(c->initrd.data);
}

int vm_run(struct vm_config *cfg, const struct vm_run_domain_ops *dom)
{
	struct run_ctx c = { .cfg = cfg, .dom = dom, .stats_fd = -1 };
	int status;

	console_init(&c.con);
	if (check_output_paths(&c) || load_inputs(&c) || prepare_sched(&c)) {
		status = RUN_EXIT_USAGE;
		goto out;
	}
	if (cfg->dump_acpi_dir || cfg->dump_domain) {
		status = cfg->dump_acpi_dir ? dump_acpi(cfg, &c.sched) : 0;
		if (!status && cfg->dump_domain) {
			status = dom ? dump_domain(cfg, dom, &c.sched, c.dump_domain_f) :
				 RUN_EXIT_USAGE;
			c.dump_domain_f = NULL;
		}
		goto out;
	}
	if (console_open(&c.con, cfg)) {
		cleanup(&c);
		return RUN_EXIT_USAGE;
	}
	status = build_vm(&c);
	if (!status) {
		evloop_run(c.vm->loop);
		vm_sched_stop(&c.sched);
		vm_join_stop(c.join);
		vm_stop_vcpus(c.vm);
		report_sched(&c);
		log_counters(c.vm);
		status = report_exit(c.vm);
	}
out:
	/* A refused --dump-acpi leaves no empty directory behind (rmdir keeps a full one). */
	if (status && c.dump_dir_created)
		rmdir(cfg->dump_acpi_dir);
	cleanup(&c);
	return status;
}
