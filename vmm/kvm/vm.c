// SPDX-License-Identifier: MIT
/*
 * VM creation: /dev/kvm, the VM fd, TSS and identity-map pages (needed by
 * VMX; harmless elsewhere), in-kernel irqchip (LAPICs, IOAPIC, PIC) and PIT,
 * guest RAM in one MAP_NORESERVE mapping split around the MMIO hole, the
 * buses, the vCPUs with their CPUID, and the lifecycle (start, exit request,
 * stop).
 */
#include "vmm/kvm/vm.h"
#include "util/evloop.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define KVM_API_VERSION_EXPECTED 12

static int kvm_open(struct vm *vm)
{
	int version;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		pr_err("cannot open /dev/kvm: %s (capvisor needs read/write access to KVM)",
		       strerror(errno));
		return -errno;
	}
	version = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION_EXPECTED) {
		pr_err("/dev/kvm: KVM API version %d, expected %d", version, KVM_API_VERSION_EXPECTED);
		return -ENOTSUP;
	}
	/* The lossless kick protocol (vcpu.h) rests on immediate_exit (Linux >= 4.11). */
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_IMMEDIATE_EXIT) <= 0 ||
	    ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_IRQCHIP) <= 0) {
		pr_err("/dev/kvm lacks KVM_CAP_IMMEDIATE_EXIT or KVM_CAP_IRQCHIP (host kernel too old)");
		return -ENOTSUP;
	}
	vm->run_size = (size_t)ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	do
		vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	while (vm->vm_fd < 0 && errno == EINTR);
	if (vm->vm_fd < 0) {
		pr_err("KVM_CREATE_VM: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int vm_ioctl(struct vm *vm, unsigned long req, void *arg, const char *what)
{
	if (ioctl(vm->vm_fd, req, arg) < 0) {
		pr_err("%s: %s", what, strerror(errno));
		return -errno;
	}
	return 0;
}

static int setup_platform(struct vm *vm)
{
	uint64_t identity = LAYOUT_IDENTITY_MAP;
	struct kvm_pit_config pit = { .flags = 0 };

	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)LAYOUT_TSS) < 0) {
		pr_err("KVM_SET_TSS_ADDR: %s", strerror(errno));
		return -errno;
	}
	if (vm_ioctl(vm, KVM_SET_IDENTITY_MAP_ADDR, &identity, "KVM_SET_IDENTITY_MAP_ADDR") ||
	    vm_ioctl(vm, KVM_CREATE_IRQCHIP, NULL, "KVM_CREATE_IRQCHIP") ||
	    vm_ioctl(vm, KVM_CREATE_PIT2, &pit, "KVM_CREATE_PIT2"))
		return -EIO;
	return 0;
}

static int set_slot(struct vm *vm, uint32_t slot, uint64_t gpa, uint64_t size, void *host)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)host,
	};

	return vm_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r, "KVM_SET_USER_MEMORY_REGION");
}

static int setup_memory(struct vm *vm, uint64_t size)
{
	void *host = mmap(NULL, size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (host == MAP_FAILED) {
		pr_err("--mem: cannot map %llu MiB of guest RAM: %s",
		       (unsigned long long)(size >> 20), strerror(errno));
		return -ENOMEM;
	}
	vm->mem.host = host;
	vm->mem_size = size;
	guest_mem_split(size, &vm->mem.low_size, &vm->mem.high_size);
	if (set_slot(vm, 0, 0, vm->mem.low_size, host))
		return -EIO;
	if (vm->mem.high_size &&
	    set_slot(vm, 1, LAYOUT_RAM_ABOVE_4G, vm->mem.high_size, vm->mem.host + vm->mem.low_size))
		return -EIO;
	e820_build(&vm->e820, &vm->mem);
	return 0;
}

/* Per-vCPU CPUID: the VM-wide table plus this vCPU's APIC id. */
static int setup_cpuid(struct vm *vm, const struct vm_params *p)
{
	struct cpuid_config cfg = {
		.nr_vcpus = p->nr_vcpus,
		.hide = p->cpu_hide,
		.aperfmperf = p->aperfmperf,
	};
	size_t size;
	struct kvm_cpuid2 *c;
	int khz = ioctl(vm->vcpus[0]->fd, KVM_GET_TSC_KHZ, 0);

	vm->tsc_khz = khz > 0 ? (uint32_t)khz : 0;
	cfg.tsc_khz = vm->tsc_khz;
	vm->cpuid = cpuid_get_supported(vm->kvm_fd);
	if (!vm->cpuid || cpuid_fixup(vm->cpuid, vm->cpuid->nent + CPUID_SPARE_ENTRIES, &cfg))
		return -EIO;
	size = sizeof(*vm->cpuid) + vm->cpuid->nent * sizeof(vm->cpuid->entries[0]);
	c = malloc(size);
	if (!c)
		return -ENOMEM;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		memcpy(c, vm->cpuid, size);
		cpuid_set_apic_id(c, i);
		if (ioctl(vm->vcpus[i]->fd, KVM_SET_CPUID2, c) < 0) {
			pr_err("vCPU %u: KVM_SET_CPUID2: %s", i, strerror(errno));
			free(c);
			return -EIO;
		}
	}
	free(c);
	return 0;
}

static int create_vcpus(struct vm *vm, const struct vm_params *p)
{
	int max = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);

	if (max > 0 && p->nr_vcpus > (unsigned int)max) {
		pr_err("--vcpus: %u, this host's KVM allows at most %d", p->nr_vcpus, max);
		return -EINVAL;
	}
	vm->vcpus = calloc(p->nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return -ENOMEM;
	for (unsigned int i = 0; i < p->nr_vcpus; i++) {
		vm->vcpus[i] = vcpu_create(vm, i);
		if (!vm->vcpus[i])
			return -EIO;
		vm->nr_vcpus = i + 1;
	}
	return 0;
}

struct vm *vm_create(const struct vm_params *p)
{
	struct vm *vm = calloc(1, sizeof(*vm));

	if (!vm)
		return NULL;
	vm->kvm_fd = vm->vm_fd = -1;
	pthread_mutex_init(&vm->exit_lock, NULL);
	vm->pio = bus_new("pio");
	vm->mmio = bus_new("mmio");
	vm->loop = evloop_new();
	if (!vm->pio || !vm->mmio || !vm->loop || vcpu_init_signals())
		goto fail;
	if (kvm_open(vm) || setup_platform(vm) || setup_memory(vm, p->mem_size) ||
	    create_vcpus(vm, p) || setup_cpuid(vm, p))
		goto fail;
	return vm;
fail:
	vm_destroy(vm);
	return NULL;
}

void vm_destroy(struct vm *vm)
{
	if (!vm)
		return;
	vm_stop_vcpus(vm);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_destroy(vm->vcpus[i]);
	free(vm->vcpus);
	free(vm->cpuid);
	vm_free_devices(vm);
	if (vm->mem.host)
		munmap(vm->mem.host, vm->mem_size);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	bus_free(vm->pio);
	bus_free(vm->mmio);
	evloop_free(vm->loop);
	pthread_mutex_destroy(&vm->exit_lock);
	free(vm);
}

int vm_register_msr(struct vm *vm, const struct vm_msr_handler *h)
{
	if (vm->msr_filter_installed)
		return -EBUSY;
	if (vm_find_msr(vm, h->msr))
		return -EEXIST;
	if (vm->nr_msrs == VM_MAX_MSR_HANDLERS)
		return -ENOSPC;
	vm->msrs[vm->nr_msrs++] = *h;
	return 0;
}

const struct vm_msr_handler *vm_find_msr(const struct vm *vm, uint32_t msr)
{
	for (unsigned int i = 0; i < vm->nr_msrs; i++)
		if (vm->msrs[i].msr == msr)
			return &vm->msrs[i];
	return NULL;
}

/*
 * Every registered MSR gets a one-MSR range whose bitmap bit is 0 (deny):
 * with KVM_MSR_EXIT_REASON_FILTER a denied access exits to userspace instead
 * of injecting #GP. Everything else stays with KVM (default allow).
 */
static int install_msr_filter(struct vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args[0] = KVM_MSR_EXIT_REASON_FILTER,
	};
	struct kvm_msr_filter filter = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };
	uint8_t deny[VM_MAX_MSR_HANDLERS] = { 0 };

	if (!vm->nr_msrs)
		return 0;
	if (vm_ioctl(vm, KVM_ENABLE_CAP, &cap, "KVM_ENABLE_CAP(X86_USER_SPACE_MSR)"))
		return -EIO;
	for (unsigned int i = 0; i < vm->nr_msrs; i++)
		filter.ranges[i] = (struct kvm_msr_filter_range){
			.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
			.nmsrs = 1,
			.base = vm->msrs[i].msr,
			.bitmap = &deny[i],
		};
	if (vm_ioctl(vm, KVM_X86_SET_MSR_FILTER, &filter, "KVM_X86_SET_MSR_FILTER"))
		return -EIO;
	vm->msr_filter_installed = true;
	return 0;
}

void vm_kick_vcpu(void *opaque, unsigned int vcpu)
{
	struct vm *vm = opaque;

	if (vcpu < vm->nr_vcpus)
		vcpu_kick(vm->vcpus[vcpu]);
}

int vm_vcpu_halted(void *opaque, unsigned int vcpu)
{
	struct vm *vm = opaque;

	return vcpu < vm->nr_vcpus ? vcpu_halted(vm->vcpus[vcpu]) : -EINVAL;
}

void vm_set_gate(struct vm *vm, const struct vcpu_gate_ops *ops, void *opaque)
{
	vm->gate = ops;
	vm->gate_opaque = opaque;
}

void vm_set_gate_flags(struct vm *vm, unsigned int flags)
{
	vm->gate_flags = flags;
}

int vm_start(struct vm *vm, const struct boot_entry *entry)
{
	if (install_msr_filter(vm) || vcpu_set_boot_entry(vm->vcpus[0], entry))
		return -EIO;
	/* The boot vCPU first: the others only wait for its INIT/SIPI. */
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		if (vcpu_start(vm->vcpus[i])) {
			vm_request_exit(vm, VM_EXIT_ERROR, 0, "cannot start vCPU %u's thread", i);
			return -EIO;
		}
	return 0;
}

void vm_request_exit(struct vm *vm, enum vm_exit_kind kind, int signo, const char *fmt, ...)
{
	va_list ap;
	bool first;

	pthread_mutex_lock(&vm->exit_lock);
	first = vm->exit_kind == VM_EXIT_NONE;
	if (first) {
		vm->exit_kind = kind;
		vm->exit_signal = signo;
		va_start(ap, fmt);
		vsnprintf(vm->exit_reason, sizeof(vm->exit_reason), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&vm->exit_lock);
	if (!first)
		return;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_stop(vm->vcpus[i]);
	evloop_stop(vm->loop);
}

enum vm_exit_kind vm_exit_kind(struct vm *vm)
{
	enum vm_exit_kind k;

	pthread_mutex_lock(&vm->exit_lock);
	k = vm->exit_kind;
	pthread_mutex_unlock(&vm->exit_lock);
	return k;
}

void vm_stop_vcpus(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_stop(vm->vcpus[i]);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_join(vm->vcpus[i]);
}
