/* SPDX-License-Identifier: MIT */
/*
 * The per-vCPU CPPC register page (ACPI 6.5, 8.4.6): what the `_CPC` of
 * vCPU i points at, LAYOUT_CPPC_BASE + i * LAYOUT_PER_VCPU_STRIDE, with the
 * CPPC_REG_* offsets of include/capvisor/layout.h. Independent of KVM: the MMIO bus calls
 * the ops, the dispatcher feeds the counters with cppc_account(), the QoS
 * code sets the host's limits, and the engine asks cppc_effective_request().
 *
 * Register   offset  width  access
 * desired     0x00    32    rw   0 = no request; else clamped to [lowest, highest]
 * min         0x04    32    rw   clamped to [lowest, highest]
 * max         0x08    32    rw   clamped to [lowest, highest]
 * enable      0x0c    32    rw   0 or 1; other values ignored
 * perf_limited 0x10   32    rw1c bit 0 desired excursion, bit 1 minimum excursion
 * auto_sel    0x14    32    rw   0 or 1; 1 with desired 0: min_perf is the request
 * ref counter 0x18    64    ro   8-byte read, or 4-byte reads of each half
 * del counter 0x20    64    ro   same
 * guaranteed  0x28    32    ro   what capvisor guarantees this vCPU (perf scale)
 * highest     0x2c    32    ro   the capabilities of the vCPU's cluster (caps):
 * nominal     0x30    32    ro     registers, not `_CPC` Integers, because they
 * lowest_nonlinear 0x34     ro     change when the vCPU changes cluster
 * lowest      0x38    32    ro     (cppc_set_caps)
 *
 * Hostile input never hurts: a wrong width, an unknown offset, a write to a
 * read-only register or a garbage value is ignored or clamped and counted in
 * struct cppc_stats; reads that are not served return 0. Values are on the
 * CPPC perf scale of acpi/acpi.h (acpi_perf_from_capacity()).
 */
#ifndef CAPVISOR_CPPC_H
#define CAPVISOR_CPPC_H

#include "acpi/acpi.h"
#include "devices/bus.h"
#include "devices/fbctr.h"

#include <pthread.h>
#include <stdint.h>

#define CPPC_PERF_LIMITED_DESIRED	0x1u	/* delivered < desired */
#define CPPC_PERF_LIMITED_MINIMUM	0x2u	/* delivered < min_perf */
#define CPPC_EPP_MAX			255u
#define CPPC_EPP_DEFAULT		128u	/* what the guest reads before it writes: balanced */

struct cppc_stats {
	uint64_t reads;
	uint64_t writes;
	uint64_t bad_width;	/* size/alignment the register does not have */
	uint64_t bad_offset;	/* no register there */
	uint64_t ro_writes;	/* write to a read-only register */
	uint64_t clamped;	/* value outside [lowest, highest] brought inside */
	uint64_t ignored;	/* value with no meaning (enable not 0/1) dropped */
	uint64_t requests;	/* writes that changed the effective request */
	uint32_t last_request;	/* the last non-zero effective request (perf scale) */
};

/* What the guest would read, plus what capvisor makes of it (for the demo). */
struct cppc_snapshot {
	uint32_t desired, min, max, enable, auto_sel, perf_limited, guaranteed;
	uint64_t ref_counter, del_counter;
	uint32_t host_min, host_max;	/* perf scale */
	uint32_t effective;		/* cppc_effective_request() */
};

struct cppc_dev;
/* Called after a change that may move the effective request, without the
 * device lock held: read the new value with cppc_effective_request(). */
typedef void (*cppc_notify_fn)(struct cppc_dev *dev, void *opaque);

struct cppc_dev {
	struct bus_device bus;		/* register this on the MMIO bus */
	unsigned int vcpu;
	struct acpi_cppc_caps caps;	/* under lock: cppc_set_caps() changes them */

	pthread_mutex_t lock;		/* vCPU thread, dispatcher and QoS writer */
	uint32_t desired, min, max, enable, auto_sel, perf_limited, guaranteed;
	uint32_t epp;			/* energy performance preference, 0..255 */
	unsigned int host_min_cap, host_max_cap;	/* uclamp, capacity scale */
	uint32_t host_min, host_max;			/* the same on the perf scale */
	uint64_t ref_counter, del_counter;
	uint64_t del_remainder;		/* fraction of a delivered tick carried over */
	struct fbctr_pair served;	/* the counters as the guest last read them */
	struct cppc_stats stats;
	unsigned int warned;		/* kinds of guest errors already logged */

	cppc_notify_fn notify;
	void *notify_opaque;
};

extern const struct bus_device_ops cppc_bus_ops;

/*
 * Set up vCPU vcpu's page at guest-physical base (where its `_CPC` points:
 * acpi_cppc_page_gpa()) with the `_CPC` capabilities caps (the same the
 * ACPI tables got): min/max start at lowest/highest, desired and enable at 0,
 * host limits wide open (uclamp 0..1024). -EINVAL for inconsistent caps.
 */
int cppc_init(struct cppc_dev *dev, unsigned int vcpu, uint64_t base,
	      const struct acpi_cppc_caps *caps);
void cppc_destroy(struct cppc_dev *dev);
/*
 * New capabilities (the vCPU moved to another cluster): the guest reads them
 * from now on; its desired/min/max are brought into the new range (a max at
 * the old highest follows the new highest). -EINVAL (state kept) for
 * inconsistent caps. The guest is told by the caller (devices/ged.h).
 */
int cppc_set_caps(struct cppc_dev *dev, const struct acpi_cppc_caps *caps);
uint32_t cppc_highest_perf(struct cppc_dev *dev);
void cppc_set_notify(struct cppc_dev *dev, cppc_notify_fn fn, void *opaque);

/* The vCPU's uclamp range, capacity scale 0..1024. -EINVAL (state kept) if min > max. */
int cppc_set_host_limits(struct cppc_dev *dev, unsigned int uclamp_min, unsigned int uclamp_max);
/* guaranteed_perf the guest reads (perf scale, capped at highest_perf). */
void cppc_set_guaranteed(struct cppc_dev *dev, uint32_t perf);

/*
 * ref_ticks of reference time passed while the vCPU was running (not halted,
 * not stolen) at delivered_perf (perf scale): the reference counter advances
 * by ref_ticks, the delivered counter by ref_ticks * delivered / reference
 * perf (caps.reference_perf, or nominal when 0; remainders carried, so the
 * ratio is exact over time). Sets perf_limited
 * bits when delivered fell short of the guest's desired or min request.
 */
void cppc_account(struct cppc_dev *dev, uint64_t ref_ticks, uint32_t delivered_perf);
/* Has the guest read or written this page yet? */
bool cppc_in_use(struct cppc_dev *dev);

/*
 * The request the engine should see, perf scale: 0 when the guest makes none
 * (cppc_enable 0, or desired 0 without autonomous selection), else desired
 * (with auto_sel 1 and desired 0: min_perf when above lowest) clamped into
 * the guest's [min, max] and then into the host's limits. Never outside the
 * host limits.
 */
uint32_t cppc_effective_request(struct cppc_dev *dev);
/* The same on the capacity scale, clamped to the uclamp range; 0 = none. */
unsigned int cppc_effective_request_capacity(struct cppc_dev *dev);

/*
 * The energy performance preference (the guest reaches it through an MSR,
 * see MSR_AMD_CPPC_REQ): 0 asks for performance, 255 for energy. With
 * autonomous selection on and desired 0, EPP 0 makes max_perf the request.
 * cppc_set_epp() ignores (and counts) a value above 255.
 */
uint32_t cppc_get_epp(struct cppc_dev *dev);
void cppc_set_epp(struct cppc_dev *dev, uint32_t epp);

void cppc_get_stats(struct cppc_dev *dev, struct cppc_stats *out);
void cppc_snapshot(struct cppc_dev *dev, struct cppc_snapshot *out);

#endif
