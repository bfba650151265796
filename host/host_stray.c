// SPDX-License-Identifier: MIT
/*
 * vCPU threads that run between the runs the host gave them (docs/host.md,
 * "Enforcement"). A VM's thread says a run ended by writing its slot's
 * `left`; one that says so and runs on has the host CPU behind the engine's
 * back, and its proxy, believing it out, hands the CPU to the next vCPU.
 * The kernel knows better: the thread's CPU time (schedstat) grows by more
 * than the runs the dispatcher charged. Between its runs a vCPU thread only
 * waits at its gate, so more than HOST_STRAY_NS of such CPU between two
 * looks is a VM running on: it is held with the host kernel as a VM
 * that ignores its kicks is (host_enforce.c), and let go once its vCPUs
 * stay out between runs (below HOST_STRAY_CLEAN_NS) for
 * HOST_STRAY_CLEAN_LOOKS looks in a row.
 *
 * On the main thread, every HOST_STRAY_LOOK_NS, per joined vCPU: a pread of
 * its schedstat, and the dispatcher's lock to read its run_ns (a second
 * pread for a vCPU in a run, brought up to now).
 */
#include "host/host.h"
#include "util/log.h"

/*
 * CPU the vCPU's thread used since the last look outside the runs the
 * dispatcher charged it for: its CPU time (the kernel's) grew by more than
 * its runs' (the dispatcher's run_ns, brought up to now, which counts a
 * run under way from the same clock).
 */
static uint64_t ran_between_runs(struct host_proxy *p)
{
	uint64_t cpu = host_proxy_thread_cpu_ns(p), active, run, ran = 0;

	dispatch_vcpu_times(p->h->d, p->slot, &active, &run);
	if (cpu && p->look_cpu_ns && cpu - p->look_cpu_ns > run - p->look_run_ns)
		ran = (cpu - p->look_cpu_ns) - (run - p->look_run_ns);
	p->look_cpu_ns = cpu;
	p->look_run_ns = run;
	return ran;
}

/*
 * Found out on more than HOST_STRAY_NS between runs in one look (all its
 * vCPUs), let go after HOST_STRAY_CLEAN_LOOKS looks in a row of less than
 * HOST_STRAY_CLEAN_NS: held in its cgroup it still runs on, throttled, and
 * must not pass for obedient on a look it was throttled through.
 */
static void look_at_vm(struct host_vm *vm)
{
	uint64_t ran = 0, worst = 0;
	unsigned int worst_vcpu = 0;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		uint64_t r = ran_between_runs(&vm->proxy[i]);

		ran += r;
		if (r > worst) {
			worst = r;
			worst_vcpu = i;
		}
	}
	/*
	 * A late run (a kick ignored, held already: host_proxy.c) also runs
	 * uncharged: not judged here while it lasts, nor in the look that
	 * still holds the end of it.
	 */
	if (atomic_load(&vm->late)) {
		vm->stray_skip = 2;
		return;
	}
	if (vm->stray_skip) {
		vm->stray_skip--;
		return;
	}
	if (ran > HOST_STRAY_NS && !vm->strays)
		pr_warn("VM '%s' ran %llu us between the runs it was given (vCPU %u %llu us): it "
			"runs under the host kernel until it stops", vm->name,
			(unsigned long long)(ran / 1000), worst_vcpu,
			(unsigned long long)(worst / 1000));
	if (ran > HOST_STRAY_NS)
		vm->strays = true;
	if (ran >= HOST_STRAY_CLEAN_NS)
		vm->stray_clean = 0;
	else if (vm->strays && ++vm->stray_clean >= HOST_STRAY_CLEAN_LOOKS)
		vm->strays = false;
	host_vm_obedience(vm);
}

void host_stray_look(struct host *h)
{
	for (unsigned int i = 0; i < HOST_MAX_VMS; i++)
		if (h->vms[i].state == HOST_VM_RUNNING)
			look_at_vm(&h->vms[i]);
}
