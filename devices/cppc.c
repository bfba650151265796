// SPDX-License-Identifier: MIT
/*
 * The per-vCPU CPPC register page: see cppc.h for the register map and the
 * rules for hostile input. Every guest access takes the device lock; the
 * notify callback runs after it is dropped so that it may take the engine's
 * lock (the dispatcher holds the engine's lock when it calls cppc_account()).
 */
#include "devices/cppc.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum cppc_warn {
	WARN_WIDTH	= 1u << 0,
	WARN_OFFSET	= 1u << 1,
	WARN_RO		= 1u << 2,
	WARN_VALUE	= 1u << 3,
};

static uint32_t clamp32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* First problem of each kind per device gets a warning; all are counted. */
__attribute__((format(printf, 3, 4)))
static void warn_once(struct cppc_dev *dev, enum cppc_warn kind, const char *fmt, ...)
{
	char msg[128];
	va_list ap;

	if (dev->warned & kind)
		return;
	dev->warned |= kind;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_warn("cppc vCPU %u: guest %s; ignored or clamped, further ones only counted\n",
		dev->vcpu, msg);
}

/* Delivered may run ahead of reference up to highest / reference perf. */
static void set_max_ratio(struct cppc_dev *dev)
{
	uint32_t ref = acpi_cppc_reference_perf(&dev->caps);

	dev->served.max_ratio = (dev->caps.highest_perf * 1024 + ref - 1) / ref;
}

static bool caps_ok(const struct acpi_cppc_caps *c)
{
	return c->lowest_perf && c->lowest_perf <= c->lowest_nonlinear_perf &&
	       c->lowest_nonlinear_perf <= c->nominal_perf &&
	       c->nominal_perf <= c->highest_perf && c->guaranteed_perf <= c->highest_perf &&
	       c->reference_perf <= ACPI_CPPC_PERF_MAX;
}

int cppc_init(struct cppc_dev *dev, unsigned int vcpu, uint64_t base,
	      const struct acpi_cppc_caps *caps)
{
	if (!caps_ok(caps) || vcpu >= LAYOUT_MAX_VCPUS) {
		pr_err("cppc vCPU %u: capabilities %u/%u/%u/%u (lowest..highest), guaranteed "
		       "%u: expected 0 < lowest <= lowest_nonlinear <= nominal <= highest and "
		       "guaranteed <= highest, vCPU < %u\n", vcpu, caps->lowest_perf,
		       caps->lowest_nonlinear_perf, caps->nominal_perf, caps->highest_perf,
		       caps->guaranteed_perf, LAYOUT_MAX_VCPUS);
		return -EINVAL;
	}
	memset(dev, 0, sizeof(*dev));
	dev->bus = (struct bus_device){ .ops = &cppc_bus_ops, .base = base,
					.len = LAYOUT_PER_VCPU_STRIDE, .priv = dev };
	dev->vcpu = vcpu;
	dev->caps = *caps;
	dev->min = caps->lowest_perf;
	dev->max = caps->highest_perf;
	dev->guaranteed = caps->guaranteed_perf;
	dev->epp = CPPC_EPP_DEFAULT;
	set_max_ratio(dev);
	dev->host_min_cap = 0;
	dev->host_max_cap = ACPI_CAPACITY_SCALE;
	dev->host_min = 0;
	dev->host_max = acpi_perf_from_capacity_floor(ACPI_CAPACITY_SCALE);
	pthread_mutex_init(&dev->lock, NULL);
	return 0;
}

void cppc_destroy(struct cppc_dev *dev)
{
	pthread_mutex_destroy(&dev->lock);
}

void cppc_set_notify(struct cppc_dev *dev, cppc_notify_fn fn, void *opaque)
{
	pthread_mutex_lock(&dev->lock);
	dev->notify = fn;
	dev->notify_opaque = opaque;
	pthread_mutex_unlock(&dev->lock);
}

/* The callback is read under the lock and called after it is dropped. */
static void notify_unlock(struct cppc_dev *dev, bool changed)
{
	cppc_notify_fn fn = dev->notify;
	void *opaque = dev->notify_opaque;

	pthread_mutex_unlock(&dev->lock);
	if (changed && fn)
		fn(dev, opaque);
}

/*
 * What the guest asks for before any clamp: desired, or with autonomous
 * selection on and desired 0 its floor. Linux 6.12's amd-pstate in guided
 * mode (auto_sel 1) writes schedutil's choice into min_perf and 0 into
 * desired: the platform is to pick a level in [min, max]. The engine takes
 * a request as the exact level, so capvisor picks the floor; a floor at
 * lowest asks nothing, and the engine's own choice decides.
 */
static uint32_t asked_locked(const struct cppc_dev *dev)
{
	if (dev->desired || !dev->auto_sel)
		return dev->desired;
	/* EPP 0: all performance (6.12's active mode with the performance policy). */
	if (!dev->epp)
		return dev->max;
	return dev->min > dev->caps.lowest_perf ? dev->min : 0;
}

static uint32_t effective_locked(const struct cppc_dev *dev)
{
	uint32_t lo = dev->min, hi = dev->max, r, hlo = dev->host_min, asked = asked_locked(dev);

	if (!dev->enable || !asked)
		return 0;
	/* min above max (mid-update by the guest): max wins, as a ceiling should. */
	if (lo > hi)
		lo = hi;
	r = clamp32(asked, lo, hi);
	if (hlo > dev->host_max)
		hlo = dev->host_max;
	return clamp32(r, hlo, dev->host_max);
}

uint32_t cppc_effective_request(struct cppc_dev *dev)
{
	uint32_t r;

	pthread_mutex_lock(&dev->lock);
	r = effective_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	return r;
}

unsigned int cppc_effective_request_capacity(struct cppc_dev *dev)
{
	unsigned int cap, lo, hi;
	uint32_t r;

	pthread_mutex_lock(&dev->lock);
	r = effective_locked(dev);
	lo = dev->host_min_cap;
	hi = dev->host_max_cap;
	pthread_mutex_unlock(&dev->lock);
	if (!r)
		return 0;
	cap = acpi_capacity_from_perf(r);
	return cap < lo ? lo : cap > hi ? hi : cap;
}

int cppc_set_host_limits(struct cppc_dev *dev, unsigned int uclamp_min, unsigned int uclamp_max)
{
	bool changed;
	uint32_t before;

	/* The QoS code validated the request and names it in its own error. */
	if (uclamp_min > uclamp_max || uclamp_max > ACPI_CAPACITY_SCALE)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	before = effective_locked(dev);
	dev->host_min_cap = uclamp_min;
	dev->host_max_cap = uclamp_max;
	/* Rounded inwards so the perf range never allows more than uclamp does. */
	dev->host_min = acpi_perf_from_capacity_ceil(uclamp_min);
	dev->host_max = acpi_perf_from_capacity_floor(uclamp_max);
	changed = effective_locked(dev) != before;
	notify_unlock(dev, changed);
	return 0;
}

static void count_request(struct cppc_dev *dev, bool changed);

uint32_t cppc_get_epp(struct cppc_dev *dev)
{
	uint32_t epp;

	pthread_mutex_lock(&dev->lock);
	epp = dev->epp;
	pthread_mutex_unlock(&dev->lock);
	return epp;
}

void cppc_set_epp(struct cppc_dev *dev, uint32_t epp)
{
	bool changed;
	uint32_t before;

	pthread_mutex_lock(&dev->lock);
	dev->stats.writes++;
	before = effective_locked(dev);
	if (epp > CPPC_EPP_MAX) {
		dev->stats.ignored++;
		warn_once(dev, WARN_VALUE, "energy performance preference %u, expected 0..%u", epp,
			  CPPC_EPP_MAX);
	} else {
		dev->epp = epp;
	}
	changed = effective_locked(dev) != before;
	count_request(dev, changed);
	notify_unlock(dev, changed);
}

void cppc_set_guaranteed(struct cppc_dev *dev, uint32_t perf)
{
	pthread_mutex_lock(&dev->lock);
	dev->guaranteed = perf > dev->caps.highest_perf ? dev->caps.highest_perf : perf;
	pthread_mutex_unlock(&dev->lock);
}

int cppc_set_caps(struct cppc_dev *dev, const struct acpi_cppc_caps *caps)
{
	bool changed;
	uint32_t before;

	if (!caps_ok(caps))
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	before = effective_locked(dev);
	/* A max_perf at the old ceiling meant "no ceiling": it follows the new one. */
	if (dev->max == dev->caps.highest_perf)
		dev->max = caps->highest_perf;
	dev->caps = *caps;
	/* The guest's other requests stay what they were, inside the new range. */
	if (dev->desired)
		dev->desired = clamp32(dev->desired, caps->lowest_perf, caps->highest_perf);
	dev->min = clamp32(dev->min, caps->lowest_perf, caps->highest_perf);
	dev->max = clamp32(dev->max, caps->lowest_perf, caps->highest_perf);
	if (dev->guaranteed > caps->highest_perf)
		dev->guaranteed = caps->highest_perf;
	set_max_ratio(dev);
	changed = effective_locked(dev) != before;
	notify_unlock(dev, changed);
	return 0;
}

uint32_t cppc_highest_perf(struct cppc_dev *dev)
{
	uint32_t h;

	pthread_mutex_lock(&dev->lock);
	h = dev->caps.highest_perf;
	pthread_mutex_unlock(&dev->lock);
	return h;
}

bool cppc_in_use(struct cppc_dev *dev)
{
	bool used;

	pthread_mutex_lock(&dev->lock);
	used = dev->stats.reads || dev->stats.writes;
	pthread_mutex_unlock(&dev->lock);
	return used;
}

void cppc_account(struct cppc_dev *dev, uint64_t ref_ticks, uint32_t delivered_perf)
{
	unsigned __int128 num;
	uint32_t reference, desired;

	pthread_mutex_lock(&dev->lock);
	reference = acpi_cppc_reference_perf(&dev->caps);
	if (delivered_perf > dev->caps.highest_perf)
		delivered_perf = dev->caps.highest_perf;
	dev->ref_counter += ref_ticks;
	num = (unsigned __int128)ref_ticks * delivered_perf + dev->del_remainder;
	dev->del_counter += (uint64_t)(num / reference);
	dev->del_remainder = (uint64_t)(num % reference);
	if (ref_ticks && dev->enable && asked_locked(dev)) {
		desired = clamp32(asked_locked(dev), dev->min < dev->max ? dev->min : dev->max,
				  dev->max);
		if (delivered_perf < desired)
			dev->perf_limited |= CPPC_PERF_LIMITED_DESIRED;
		if (delivered_perf < dev->min && dev->min <= dev->max)
			dev->perf_limited |= CPPC_PERF_LIMITED_MINIMUM;
	}
	pthread_mutex_unlock(&dev->lock);
}

void cppc_get_stats(struct cppc_dev *dev, struct cppc_stats *out)
{
	pthread_mutex_lock(&dev->lock);
	*out = dev->stats;
	pthread_mutex_unlock(&dev->lock);
}

void cppc_snapshot(struct cppc_dev *dev, struct cppc_snapshot *out)
{
	pthread_mutex_lock(&dev->lock);
	*out = (struct cppc_snapshot){
		.desired = dev->desired, .min = dev->min, .max = dev->max,
		.enable = dev->enable, .auto_sel = dev->auto_sel,
		.perf_limited = dev->perf_limited,
		.guaranteed = dev->guaranteed, .ref_counter = dev->ref_counter,
		.del_counter = dev->del_counter, .host_min = dev->host_min,
		.host_max = dev->host_max, .effective = effective_locked(dev),
	};
	pthread_mutex_unlock(&dev->lock);
}

/* ---- Guest accesses ---- */

enum cppc_access {
	ACC_BAD_WIDTH = -2,
	ACC_BAD_OFFSET = -1,
	ACC_REG32 = 0,		/* a 32-bit register, 4-byte access */
	ACC_CTR64,		/* a whole counter, 8-byte access */
	ACC_CTR_LO,		/* low half of a counter, 4-byte access */
	ACC_CTR_HI,		/* high half */
};

static bool is_reg32(uint64_t offset)
{
	switch (offset) {
	case CPPC_REG_DESIRED_PERF:
	case CPPC_REG_MIN_PERF:
	case CPPC_REG_MAX_PERF:
	case CPPC_REG_ENABLE:
	case CPPC_REG_PERF_LIMITED:
	case CPPC_REG_AUTO_SEL:
	case CPPC_REG_GUARANTEED_PERF:
	case CPPC_REG_HIGHEST_PERF:
	case CPPC_REG_NOMINAL_PERF:
	case CPPC_REG_LOWEST_NONLINEAR_PERF:
	case CPPC_REG_LOWEST_PERF:
		return true;
	}
	return false;
}

static bool is_counter(uint64_t base)
{
	return base == CPPC_REG_REF_COUNTER || base == CPPC_REG_DEL_COUNTER;
}

static enum cppc_access classify(uint64_t offset, unsigned int len)
{
	if (len == 4 && is_reg32(offset))
		return ACC_REG32;
	if (len == 8 && is_counter(offset))
		return ACC_CTR64;
	if (len == 4 && is_counter(offset))
		return ACC_CTR_LO;
	if (len == 4 && offset >= 4 && is_counter(offset - 4))
		return ACC_CTR_HI;
	/* A register lives here, just not with this size or alignment. */
	if (offset < CPPC_REG_PAGE_USED)
		return ACC_BAD_WIDTH;
	return ACC_BAD_OFFSET;
}

/*
 * A counter as the guest sees it: never the same value twice (fbctr.h), so
 * that any two reads give a usable delta even between two of the host's
 * feeds. The high half of a split read belongs to the value its low half got.
 */
static uint64_t served_counter(struct cppc_dev *dev, uint64_t offset, bool new_read)
{
	bool ref = (offset & ~7ull) == CPPC_REG_REF_COUNTER;

	if (!new_read)
		return ref ? dev->served.ref : dev->served.act;
	return fbctr_read(&dev->served, ref ? FBCTR_REF : FBCTR_ACT, dev->del_counter,
			  dev->ref_counter);
}

static uint32_t read_cap(const struct acpi_cppc_caps *c, uint64_t offset)
{
	switch (offset) {
	case CPPC_REG_HIGHEST_PERF:
		return c->highest_perf;
	case CPPC_REG_NOMINAL_PERF:
		return c->nominal_perf;
	case CPPC_REG_LOWEST_NONLINEAR_PERF:
		return c->lowest_nonlinear_perf;
	case CPPC_REG_LOWEST_PERF:
		return c->lowest_perf;
	default:
		return 0;
	}
}

static uint32_t read_reg32(const struct cppc_dev *dev, uint64_t offset)
{
	switch (offset) {
	case CPPC_REG_DESIRED_PERF:
		return dev->desired;
	case CPPC_REG_MIN_PERF:
		return dev->min;
	case CPPC_REG_MAX_PERF:
		return dev->max;
	case CPPC_REG_ENABLE:
		return dev->enable;
	case CPPC_REG_PERF_LIMITED:
		return dev->perf_limited;
	case CPPC_REG_GUARANTEED_PERF:
		return dev->guaranteed;
	case CPPC_REG_AUTO_SEL:
		return dev->auto_sel;
	default:
		return read_cap(&dev->caps, offset);
	}
}

static void count_bad(struct cppc_dev *dev, enum cppc_access acc, const char *dir,
		      uint64_t offset, unsigned int len)
{
	if (acc == ACC_BAD_WIDTH) {
		dev->stats.bad_width++;
		warn_once(dev, WARN_WIDTH, "%s of %u bytes at offset 0x%llx: registers are "
			  "4 bytes (counters 8, or 4 per half)", dir, len,
			  (unsigned long long)offset);
	} else {
		dev->stats.bad_offset++;
		warn_once(dev, WARN_OFFSET, "%s at offset 0x%llx: no register there", dir,
			  (unsigned long long)offset);
	}
}

static void cppc_read(struct bus_device *bd, uint64_t offset, void *data, unsigned int len)
{
	struct cppc_dev *dev = bd->priv;
	enum cppc_access acc = classify(offset, len);
	uint64_t v = 0;

	memset(data, 0, len);
	pthread_mutex_lock(&dev->lock);
	dev->stats.reads++;
	switch (acc) {
	case ACC_REG32:
		v = read_reg32(dev, offset);
		break;
	case ACC_CTR64:
	case ACC_CTR_LO:
		v = served_counter(dev, offset, true);
		break;
	case ACC_CTR_HI:
		v = served_counter(dev, offset, false) >> 32;
		break;
	default:
		count_bad(dev, acc, "read", offset, len);
		break;
	}
	pthread_mutex_unlock(&dev->lock);
	if (acc >= 0)
		memcpy(data, &v, len);	/* x86 host: little endian, low bytes first */
}

/* A perf value for desired/min/max: inside [lowest, highest], counted if not. */
static uint32_t perf_in_range(struct cppc_dev *dev, uint32_t v)
{
	uint32_t c = clamp32(v, dev->caps.lowest_perf, dev->caps.highest_perf);

	if (c != v) {
		dev->stats.clamped++;
		warn_once(dev, WARN_VALUE, "perf value %u outside [%u, %u]", v,
			  dev->caps.lowest_perf, dev->caps.highest_perf);
	}
	return c;
}

static void write_reg32(struct cppc_dev *dev, uint64_t offset, uint32_t v)
{
	switch (offset) {
	case CPPC_REG_DESIRED_PERF:
		/* 0 means "no request" (the platform decides), so it is kept. */
		dev->desired = v ? perf_in_range(dev, v) : 0;
		return;
	case CPPC_REG_MIN_PERF:
		dev->min = perf_in_range(dev, v);
		return;
	case CPPC_REG_MAX_PERF:
		dev->max = perf_in_range(dev, v);
		return;
	case CPPC_REG_ENABLE:
	case CPPC_REG_AUTO_SEL:
		if (v > 1) {
			dev->stats.ignored++;
			warn_once(dev, WARN_VALUE, "%s value %u, expected 0 or 1",
				  offset == CPPC_REG_ENABLE ? "cppc_enable" : "auto_sel_enable", v);
			return;
		}
		*(offset == CPPC_REG_ENABLE ? &dev->enable : &dev->auto_sel) = v;
		return;
	case CPPC_REG_PERF_LIMITED:
		dev->perf_limited &= ~v;	/* write 1 to clear */
		return;
	default:
		dev->stats.ro_writes++;
		warn_once(dev, WARN_RO, "write to read-only register 0x%llx",
			  (unsigned long long)offset);
		return;
	}
}

/*
 * A stock Linux guest withdraws its request on its way down (cpufreq is
 * suspended at shutdown), so the request at exit is 0 however many came
 * before: the count and the last one say what the guest asked.
 */
static void count_request(struct cppc_dev *dev, bool changed)
{
	uint32_t now = effective_locked(dev);

	if (!changed)
		return;
	dev->stats.requests++;
	if (now)
		dev->stats.last_request = now;
}

static void cppc_write(struct bus_device *bd, uint64_t offset, const void *data,
		       unsigned int len)
{
	struct cppc_dev *dev = bd->priv;
	enum cppc_access acc = classify(offset, len);
	bool changed = false;
	uint32_t before, v = 0;

	pthread_mutex_lock(&dev->lock);
	dev->stats.writes++;
	before = effective_locked(dev);
	switch (acc) {
	case ACC_REG32:
		memcpy(&v, data, 4);
		write_reg32(dev, offset, v);
		changed = effective_locked(dev) != before;
		count_request(dev, changed);
		break;
	case ACC_CTR64:
	case ACC_CTR_LO:
	case ACC_CTR_HI:
		dev->stats.ro_writes++;
		warn_once(dev, WARN_RO, "write to read-only counter 0x%llx",
			  (unsigned long long)offset);
		break;
	default:
		count_bad(dev, acc, "write", offset, len);
		break;
	}
	notify_unlock(dev, changed);
}

const struct bus_device_ops cppc_bus_ops = {
	.name = "cppc",
	.read = cppc_read,
	.write = cppc_write,
};
