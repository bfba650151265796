// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for what a guest can reach: port I/O, MMIO and MSR
 * exits, forged in a vCPU's kvm_run and handed to vcpu_handle_exit() the
 * way the run loop does, over a VM whose devices are registered by the
 * same code as in `capvisor run` (vm_setup_devices(): COM1, ACPI PM,
 * i8042, port 0x80; vm_sched_attach(): the CPPC and hint pages, the GED and the
 * APERF/MPERF MSRs), built without KVM. Console input (serial_rx) is
 * mixed in, and between accesses the host side acts on the same state:
 * the dispatcher's CPPC feed, clamp and reservation changes from the
 * control socket.
 *
 * Input: byte 0 picks the VM (1..4 vCPUs, CPPC on or off, one of two
 * hosts); then one access per group of bytes: kind, vCPU, width (1..8 for
 * I/O, 1..16 for MMIO, where the exit handler caps at 8; odd ones
 * included), rep count, a region (near each device, one past the last
 * vCPU's pages, or anywhere) with an offset that straddles its edges, and
 * the data. After every access it checks what must hold whatever the guest
 * did: an access no device claims reads as all ones, each vCPU's CPPC
 * state stays in its ranges and its feedback counters never go back.
 */
#include "tests/fuzz/fuzz.h"
#include "devices/cppc.h"
#include "devices/serial.h"
#include "util/evloop.h"
#include "capvisor/layout.h"
#include "util/log.h"
#include "vmm/kvm/vm.h"
#include "vmm/vm_sched.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_MAX_VCPUS	4
#define RUN_SIZE	(3 * 4096)	/* kvm_run and its PIO data page */
#define PIO_DATA_OFFSET	4096

struct input {
	const uint8_t *p;
	size_t left;
};

static uint8_t take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static uint64_t take_n(struct input *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v |= (uint64_t)take(in) << (8 * i);
	return v;
}

struct fuzz_vm {
	struct vm *vm;
	struct vm_sched vs;
	bool sched_ready;
	int null_fd;
	uint64_t ref_seen[FUZZ_MAX_VCPUS], del_seen[FUZZ_MAX_VCPUS];
};

/* A vCPU as vcpu_create() leaves it, without KVM: no fd, an anonymous kvm_run. */
static struct vcpu *fake_vcpu(struct vm *vm, unsigned int index)
{
	struct vcpu *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->vm = vm;
	v->index = index;
	v->fd = -1;
	v->tgid = getpid();
	v->stat_blocking = -1;
	v->run = mmap(NULL, RUN_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v->run == MAP_FAILED) {
		free(v);
		return NULL;
	}
	return v;
}

/* What vm_create() sets up, minus the KVM file descriptors and guest RAM. */
static struct vm *fake_vm(unsigned int nr_vcpus)
{
	struct vm *vm = calloc(1, sizeof(*vm));

	if (!vm)
		return NULL;
	vm->kvm_fd = vm->vm_fd = -1;
	vm->run_size = RUN_SIZE;
	vm->tsc_khz = 1000000;
	pthread_mutex_init(&vm->exit_lock, NULL);
	vm->pio = bus_new("pio");
	vm->mmio = bus_new("mmio");
	vm->loop = evloop_new();
	vm->vcpus = calloc(nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->pio || !vm->mmio || !vm->loop || !vm->vcpus)
		abort();
	for (vm->nr_vcpus = 0; vm->nr_vcpus < nr_vcpus; vm->nr_vcpus++) {
		vm->vcpus[vm->nr_vcpus] = fake_vcpu(vm, vm->nr_vcpus);
		if (!vm->vcpus[vm->nr_vcpus])
			abort();
	}
	return vm;
}

/* Two emulated hosts that fit on one host CPU (capacity is backed by host time). */
static const char *const hosts[] = {
	"big=1:768,little=1:256:levels=128,256",
	"cpu=2:512:levels=128,256,512:mhz=800,1600,3200",
};

/* Byte 0: bits 0-1 vCPUs - 1, bit 2 no CPPC, bit 3 the host. */
static int build(struct fuzz_vm *f, uint8_t conf)
{
	unsigned int nr = 1 + (conf & 3);
	struct vm_sched_config sc = {
		.mode = VM_SCHED_CAPVISOR,
		.no_cppc = conf & 4,
	};
	struct vcpu_qos qos[FUZZ_MAX_VCPUS];
	struct vm_qos vq;
	char err[256];

	vm_qos_default(&vq);
	for (unsigned int i = 0; i < nr; i++)
		vcpu_qos_default(&qos[i]);
	if (host_spec_parse(hosts[(conf >> 3) & 1], &sc.host, err, sizeof(err)))
		abort();
	sc.host_set = true;
	f->vm = fake_vm(nr);
	if (vm_setup_devices(f->vm, f->null_fd) ||
	    vm_sched_prepare(&f->vs, &sc, qos, &vq, nr, err, sizeof(err)))
		abort();
	f->sched_ready = true;
	if (vm_sched_attach(&f->vs, f->vm, err, sizeof(err)))
		abort();
	return 0;
}

static void teardown(struct fuzz_vm *f)
{
	vm_destroy(f->vm);	/* the real teardown: it only munmaps each kvm_run */
	if (f->sched_ready)
		vm_sched_free(&f->vs);
}

/* Where an access lands: near a device, just past the last vCPU's pages, or anywhere. */
static uint64_t pick_port(struct input *in)
{
	static const uint16_t bases[] = {
		PORT_COM1, PORT_ACPI_SLEEP_CTL, 0x60, PORT_I8042_CMD, 0x80,
	};
	uint8_t r = take(in);
	int off = (int)(take(in) & 15) - 4;

	if (r % 8 >= sizeof(bases) / sizeof(bases[0]))
		return take_n(in, 2);
	return (uint16_t)(bases[r % 8] + off);
}

static uint64_t pick_mmio(struct input *in, unsigned int nr_vcpus)
{
	uint8_t r = take(in);
	uint64_t page = (uint64_t)(take(in) % (nr_vcpus + 1)) * LAYOUT_PER_VCPU_STRIDE;
	uint64_t off = take_n(in, 2) % (LAYOUT_PER_VCPU_STRIDE + 16);

	switch (r % 5) {
	case 0:
		return LAYOUT_CPPC_BASE + page + off - 8;
	case 1:
		return LAYOUT_HINT_BASE + page + off - 8;
	case 3:
		return LAYOUT_GED_BASE + off - 8;
	case 2:
		return LAYOUT_MMIO_HOLE_START + take_n(in, 4) % (LAYOUT_MMIO_HOLE_END -
								 LAYOUT_MMIO_HOLE_START);
	default:
		return take_n(in, 8);
	}
}

static uint32_t pick_msr(struct input *in)
{
	static const uint32_t msrs[] = { MSR_IA32_MPERF, MSR_IA32_APERF, MSR_AMD_PSTATE_CTL,
					 MSR_AMD_CPPC_REQ };
	uint8_t r = take(in);

	return r % 5 < 4 ? msrs[r % 5] : (uint32_t)take_n(in, 4);
}

static void exit_io(struct vcpu *v, struct input *in, bool out)
{
	struct kvm_run *run = v->run;
	uint8_t w = take(in);
	unsigned int len = 1 + (w & 7), count = 1 + ((w >> 3) & 3);
	uint8_t *buf = (uint8_t *)run + PIO_DATA_OFFSET;

	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = out ? KVM_EXIT_IO_OUT : KVM_EXIT_IO_IN;
	run->io.size = (uint8_t)len;
	run->io.port = (uint16_t)pick_port(in);
	run->io.count = count;
	run->io.data_offset = PIO_DATA_OFFSET;
	for (unsigned int i = 0; i < len * count; i++)
		buf[i] = out ? take(in) : 0x5a;
	if (!vcpu_handle_exit(v))
		abort();	/* I/O never ends a vCPU */
}

/* An MMIO read nobody claims must read as all ones (devices/bus.h). */
static void exit_mmio(struct vcpu *v, struct input *in, bool write)
{
	struct kvm_run *run = v->run;
	uint8_t w = take(in);
	unsigned int len = 1 + (w & 15), used = len < 8 ? len : 8;
	uint64_t before = bus_unclaimed_count(v->vm->mmio);

	run->exit_reason = KVM_EXIT_MMIO;
	run->mmio.phys_addr = pick_mmio(in, v->vm->nr_vcpus);
	run->mmio.len = len;
	run->mmio.is_write = write;
	for (unsigned int i = 0; i < sizeof(run->mmio.data); i++)
		run->mmio.data[i] = write ? take(in) : 0x5a;
	if (!vcpu_handle_exit(v))
		abort();
	if (!write && bus_unclaimed_count(v->vm->mmio) != before)
		for (unsigned int i = 0; i < used; i++)
			if (run->mmio.data[i] != 0xff)
				abort();
}

static void exit_msr(struct vcpu *v, struct input *in, bool write)
{
	struct kvm_run *run = v->run;

	run->exit_reason = write ? KVM_EXIT_X86_WRMSR : KVM_EXIT_X86_RDMSR;
	run->msr.index = pick_msr(in);
	run->msr.data = write ? take_n(in, 8) : 0;
	run->msr.error = 0xff;
	if (!vcpu_handle_exit(v) || run->msr.error > 1)
		abort();	/* the handler always says: done, or #GP */
}

/* Up to 2040 bytes at once, more than the receive buffer holds: overruns too. */
static void console_input(struct fuzz_vm *f, struct input *in)
{
	uint8_t buf[255 * 8];
	size_t n = take(in) * 8u;

	for (size_t i = 0; i < n; i++)
		buf[i] = take(in);	/* past the input's end: zeros */
	serial_rx(&f->vm->serial, buf, n);
}

/*
 * Whatever the guest wrote, the CPPC registers and the request stay in
 * range, and the feedback counters never go back (Linux computes deltas).
 */
static void check_cppc(struct fuzz_vm *f)
{
	for (unsigned int i = 0; f->vs.cppc && i < f->vs.nr_vcpus; i++) {
		struct cppc_dev *dev = &f->vs.cppc[i];
		struct cppc_snapshot s;
		uint32_t lo = dev->caps.lowest_perf, hi = dev->caps.highest_perf;

		cppc_snapshot(dev, &s);
		if (s.min < lo || s.min > hi || s.max < lo || s.max > hi ||
		    (s.desired && (s.desired < lo || s.desired > hi)) || s.enable > 1 ||
		    s.auto_sel > 1 || cppc_get_epp(dev) > CPPC_EPP_MAX)
			abort();
		/*
		 * Within the host's limits; uclamp min == max between two perf
		 * values leaves host_min one above host_max: max wins (cppc.c).
		 */
		if (s.effective && (s.effective > s.host_max ||
				    s.effective < (s.host_min < s.host_max ? s.host_min : s.host_max)))
			abort();
		if (s.ref_counter < f->ref_seen[i] || s.del_counter < f->del_seen[i])
			abort();
		f->ref_seen[i] = s.ref_counter;
		f->del_seen[i] = s.del_counter;
	}
}

/*
 * Between guest accesses, what the host side does to the same state: the
 * dispatcher's CPPC feed, or a QoS change from the control socket (clamps,
 * a reservation, a move to another cluster, which raises the GED), applied
 * as the QMP attachment applies it.
 */
static void host_side(struct fuzz_vm *f, unsigned int vcpu, struct input *in)
{
	uint8_t op = take(in);
	char err[256];
	int rc;

	if (op % 4 == 0) {
		if (!f->vs.cfg.no_cppc)
			vm_sched_feed_cppc(&f->vs);	/* the dispatcher's tick hook */
		return;
	}
	if (op % 4 == 3) {
		const struct host_spec *hs = &f->vs.cfg.host;
		unsigned int c = take(in) % (hs->nr_clusters + 1);
		const char *name = c < hs->nr_clusters ? hs->clusters[c].name : NULL;

		if (dispatch_set_cluster(f->vs.d, vcpu, name, err, sizeof(err)) >= 0)
			vm_sched_cluster_changed(&f->vs, vcpu, name);
		return;
	}
	if (op % 4 == 1) {
		unsigned int min = take(in) * 5u, max = take(in) * 5u;	/* 0..1275 */

		rc = dispatch_set_uclamp(f->vs.d, vcpu, min, max, err, sizeof(err));
	} else {
		uint64_t period = (1 + take(in)) * 100000ull, runtime = (take(in) % 101) * period / 100;

		rc = dispatch_set_reservation(f->vs.d, vcpu, runtime, period, period, err, sizeof(err));
	}
	if (!rc)
		vm_sched_qos_changed(&f->vs, vcpu);
}

static void one_access(struct fuzz_vm *f, struct input *in)
{
	uint8_t kind = take(in);
	struct vcpu *v = f->vm->vcpus[take(in) % f->vm->nr_vcpus];

	switch (kind % 8) {
	case 0:
	case 1:
		exit_io(v, in, kind % 8 == 0);
		break;
	case 2:
	case 3:
		exit_mmio(v, in, kind % 8 == 2);
		break;
	case 4:
	case 5:
		exit_msr(v, in, kind % 8 == 4);
		break;
	case 6:
		console_input(f, in);
		break;
	default:
		host_side(f, v->index, in);
		break;
	}
	check_cppc(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int null_fd = -1;
	struct input in = { data, size };
	struct fuzz_vm f = { 0 };

	if (null_fd < 0) {
		log_set_level(LOG_ERROR);	/* unclaimed accesses warn once per address */
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	if (!size)
		return 0;
	f.null_fd = null_fd;
	build(&f, take(&in));
	while (in.left)
		one_access(&f, &in);
	teardown(&f);
	return 0;
}
