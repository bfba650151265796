// SPDX-License-Identifier: MIT
/*
 * The scheduler hint device (devices/hint.h): decodes a guest's YIELD and
 * YIELD_TO writes into hint_ops calls and counts every access it ignores.
 */
#include "devices/hint.h"

#include <string.h>

#include "capvisor/layout.h"

void hint_init(struct hint_dev *dev, unsigned int vcpu, unsigned int nr_vcpus, uint64_t base,
	       const struct hint_ops *ops, void *opaque)
{
	memset(dev, 0, sizeof(*dev));
	dev->bus = (struct bus_device){ .ops = &hint_bus_ops, .base = base,
					.len = LAYOUT_PER_VCPU_STRIDE, .priv = dev };
	dev->vcpu = vcpu;
	dev->nr_vcpus = nr_vcpus;
	dev->ops = ops;
	dev->opaque = opaque;
}

static void hint_read(struct bus_device *bd, uint64_t offset, void *data, unsigned int len)
{
	struct hint_dev *dev = bd->priv;

	memset(data, 0, len);
	if (offset != HINT_REG_STATUS || len != 4) {
		dev->stats.bad_access++;
		return;
	}
	memcpy(data, &dev->status, 4);
}

static void do_yield_to(struct hint_dev *dev, uint32_t target)
{
	dev->stats.yield_tos++;
	if (target >= dev->nr_vcpus || target == dev->vcpu) {
		dev->stats.bad_target++;
		dev->status = 0;
		return;
	}
	dev->status = dev->ops->yield_to(dev->opaque, dev->vcpu, target) > 0;
	dev->stats.boosted += dev->status;
}

static void hint_write(struct bus_device *bd, uint64_t offset, const void *data, unsigned int len)
{
	struct hint_dev *dev = bd->priv;
	uint32_t val;

	if (len != 4 || (offset != HINT_REG_YIELD && offset != HINT_REG_YIELD_TO)) {
		dev->stats.bad_access++;
		return;
	}
	memcpy(&val, data, 4);
	if (offset == HINT_REG_YIELD) {
		dev->stats.yields++;
		dev->ops->yield(dev->opaque, dev->vcpu);
		return;
	}
	do_yield_to(dev, val);
}

const struct bus_device_ops hint_bus_ops = {
	.name = "sched-hint",
	.read = hint_read,
	.write = hint_write,
};
