// SPDX-License-Identifier: MIT
/*
 * Host-kernel enforcement of a VM that ignores its holds (docs/host.md,
 * "Enforcement"): such a VM's process is moved into a cgroup of its own
 * whose CPU quota is the share the engine would give it, so that the host
 * kernel, not the VM, decides how much of the host CPUs it takes.
 *
 * cgroup v2 (`cpu.max`) where the unified hierarchy has the cpu
 * controller, else cgroup v1's cpu controller (`cpu.cfs_quota_us`); with
 * neither the host says once that such a VM is not held to its share.
 * Obedient VMs are not put in a cgroup: the engine holds them, and a quota
 * would take from them the idle time the engine may give them.
 */
#include "host/host.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const v2_roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
#define V1_ROOT "/sys/fs/cgroup/cpu"

static int write_file(const char *dir, const char *file, const char *text)
{
	char path[HOST_CGROUP_PATH_MAX + 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n == (ssize_t)strlen(text) ? 0 : (n < 0 ? -errno : -EIO);
	close(fd);
	return (int)n;
}

static bool file_has_word(const char *path, const char *word)
{
	char buf[512], *tok, *save;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

/* The directory for this host's VM cgroups, made now; the backend found. */
static enum host_cgroup_kind probe(struct host *h)
{
	char path[HOST_CGROUP_PATH_MAX];

	for (size_t i = 0; i < sizeof(v2_roots) / sizeof(v2_roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", v2_roots[i]);
		if (!file_has_word(path, "cpu"))
			continue;
		snprintf(h->cgroup_dir, sizeof(h->cgroup_dir), "%s/capvisor-host-%d", v2_roots[i],
			 (int)getpid());
		if (mkdir(h->cgroup_dir, 0755) && errno != EEXIST)
			continue;
		if (write_file(h->cgroup_dir, "cgroup.subtree_control", "+cpu")) {
			rmdir(h->cgroup_dir);
			continue;
		}
		return HOST_CGROUP_V2;
	}
	if (access(V1_ROOT "/cpu.cfs_quota_us", W_OK))
		return HOST_CGROUP_NONE;
	snprintf(h->cgroup_dir, sizeof(h->cgroup_dir), V1_ROOT "/capvisor-host-%d", (int)getpid());
	if (mkdir(h->cgroup_dir, 0755) && errno != EEXIST)
		return HOST_CGROUP_NONE;
	return HOST_CGROUP_V1;
}

/*
 * The directory's parent may be writable only with CAP_DAC_OVERRIDE, which
 * the host drops after setup: a helper forked now removes it at exit.
 */
static void start_reaper(struct host *h)
{
	char err[256];

	if (path_reaper_start(&h->cgroup_reaper, h->cgroup_dir, err, sizeof(err)))
		pr_warn("cgroup %s may stay behind at exit: %s", h->cgroup_dir, err);
}

void host_enforce_init(struct host *h)
{
	h->cgroup_kind = probe(h);
	if (h->cgroup_kind == HOST_CGROUP_NONE) {
		h->cgroup_dir[0] = '\0';
		pr_warn("no writable cgroup cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us): a VM "
			"that ignores its holds will not be held to its share by the host kernel");
		return;
	}
	pr_debug("enforcement: cgroup %s in %s", h->cgroup_kind == HOST_CGROUP_V2 ? "v2" : "v1",
		 h->cgroup_dir);
	start_reaper(h);
}

/*
 * What a VM is entitled to, in host CPUs (one per pCPU): its VM weight's
 * part of all pCPUs among the joined VMs, at most its cap and its vCPUs.
 * A stopped VM (vm-stop) is entitled to nothing, and its weight is not
 * counted: the engine gives its share to the others at once (its slots
 * are held), so the quota does the same.
 */
uint64_t host_vm_share_ppm(const struct host *h, const struct host_vm *vm)
{
	uint64_t total = 0, share;

	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (h->vms[i].state == HOST_VM_RUNNING && !h->vms[i].stopped)
			total += h->vms[i].weight;
	if (!total || vm->stopped)
		return 0;
	share = (uint64_t)h->nr_pcpus * 1000000ull * vm->weight / total;
	if (vm->cap_period_ns) {
		uint64_t cap = vm->cap_quota_ns * 1000000ull / vm->cap_period_ns;

		if (cap < share)
			share = cap;
	}
	if (share > vm->nr_vcpus * 1000000ull)
		share = vm->nr_vcpus * 1000000ull;
	return share;
}

static int set_quota(struct host *h, struct host_vm *vm, uint64_t share_ppm)
{
	uint64_t quota_us = share_ppm * HOST_ENFORCE_PERIOD_US / 1000000;
	char text[64];

	if (quota_us < HOST_ENFORCE_MIN_QUOTA_US)
		quota_us = HOST_ENFORCE_MIN_QUOTA_US;
	if (h->cgroup_kind == HOST_CGROUP_V2) {
		snprintf(text, sizeof(text), "%llu %u", (unsigned long long)quota_us,
			 HOST_ENFORCE_PERIOD_US);
		return write_file(vm->cgroup, "cpu.max", text);
	}
	snprintf(text, sizeof(text), "%u", HOST_ENFORCE_PERIOD_US);
	if (write_file(vm->cgroup, "cpu.cfs_period_us", text))
		return -EINVAL;
	snprintf(text, sizeof(text), "%llu", (unsigned long long)quota_us);
	return write_file(vm->cgroup, "cpu.cfs_quota_us", text);
}

/* A VM found disobedient: its process into its cgroup, the quota of its share. */
void host_enforce_vm(struct host_vm *vm)
{
	struct host *h = vm->h;
	char pid[16];
	int rc = 0;

	if (vm->held)
		return;
	vm->held = true;
	if (h->cgroup_kind == HOST_CGROUP_NONE)
		return;
	snprintf(vm->cgroup, sizeof(vm->cgroup), "%s/vm-%d", h->cgroup_dir, (int)vm->pid);
	snprintf(pid, sizeof(pid), "%d", (int)vm->pid);
	if (mkdir(vm->cgroup, 0755) && errno != EEXIST)
		rc = -errno;
	if (!rc)
		rc = set_quota(h, vm, host_vm_share_ppm(h, vm));
	if (!rc)
		rc = write_file(vm->cgroup, "cgroup.procs", pid);
	if (rc) {
		pr_warn("VM '%s' ignores its holds and cannot be held to its share in cgroup "
			"%s: %s", vm->name, vm->cgroup, strerror(-rc));
		rmdir(vm->cgroup);
		vm->cgroup[0] = '\0';
		return;
	}
	pr_warn("VM '%s' ignores its holds: the host kernel holds it to %.3f host CPUs (%s)",
		vm->name, host_vm_share_ppm(h, vm) / 1e6, vm->cgroup);
}

/*
 * The joined set, a VM's weight or cap, or a VM's stop changed: every
 * enforced VM's quota follows its share (a stopped one gets the floor).
 */
void host_enforce_resize(struct host *h)
{
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++) {
		struct host_vm *vm = &h->vms[i];
		uint64_t share;
		int rc;

		if (vm->state != HOST_VM_RUNNING || !vm->cgroup[0])
			continue;
		share = host_vm_share_ppm(h, vm);
		rc = set_quota(h, vm, share);
		if (rc)
			pr_warn("VM '%s': cannot resize its quota in %s: %s", vm->name, vm->cgroup,
				strerror(-rc));
		else
			pr_info("VM '%s' ignores its holds: the host kernel now holds it to %.3f "
				"host CPUs", vm->name, share / 1e6);
	}
}

/*
 * A VM leaves, or obeys again: a process still alive goes back to the
 * host's cgroup parent (unscheduled, not throttled by a host that forgot
 * it; or held by the engine alone again), and its cgroup is removed.
 */
void host_enforce_release(struct host_vm *vm)
{
	char parent[HOST_CGROUP_PATH_MAX], pid[16];
	char *slash;
	int rc;

	vm->held = false;
	if (!vm->cgroup[0])
		return;
	snprintf(parent, sizeof(parent), "%s", vm->h->cgroup_dir);
	slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	snprintf(pid, sizeof(pid), "%d", (int)vm->pid);
	if (kill(vm->pid, 0) == 0 && (rc = write_file(parent, "cgroup.procs", pid)))
		pr_warn("VM '%s': cannot move it out of %s: %s", vm->name, vm->cgroup,
			strerror(-rc));
	if (rmdir(vm->cgroup) && errno != ENOENT)
		pr_warn("cannot remove cgroup %s: %s", vm->cgroup, strerror(errno));
	vm->cgroup[0] = '\0';
}

void host_enforce_fini(struct host *h)
{
	if (!h->cgroup_dir[0])
		return;
	/* Empty by now: every VM left (host_fini()), each taking its cgroup along. */
	if (h->cgroup_reaper.pid > 0) {
		path_reaper_finish(&h->cgroup_reaper);
		if (access(h->cgroup_dir, F_OK) == 0)
			pr_warn("cgroup %s stayed behind (not empty?)", h->cgroup_dir);
		return;
	}
	if (rmdir(h->cgroup_dir) && errno != ENOENT)
		pr_warn("cannot remove cgroup %s: %s", h->cgroup_dir, strerror(errno));
}
