// SPDX-License-Identifier: MIT
/*
 * The Generic Event Device's page (see ged.h): read-to-clear pending words
 * of vCPUs whose highest_perf changed, and an edge on its interrupt line
 * per event. Edge rather than level: Linux's evged handler is a threaded
 * oneshot interrupt that evaluates _EVT once per edge, and an event raised
 * while _EVT runs is not lost: its bit stays set until the next read, and
 * its own edge runs _EVT again.
 */
#include "devices/ged.h"
#include "util/log.h"

#include <errno.h>
#include <string.h>

int ged_init(struct ged_dev *dev, uint64_t base, unsigned int nr_vcpus,
	     const struct irq_line *irq)
{
	if (!nr_vcpus || nr_vcpus > LAYOUT_MAX_VCPUS)
		return -EINVAL;
	memset(dev, 0, sizeof(*dev));
	dev->bus = (struct bus_device){ .ops = &ged_bus_ops, .base = base,
					.len = LAYOUT_GED_SIZE, .priv = dev };
	dev->nr_vcpus = nr_vcpus;
	dev->irq = *irq;
	pthread_mutex_init(&dev->lock, NULL);
	return 0;
}

void ged_destroy(struct ged_dev *dev)
{
	pthread_mutex_destroy(&dev->lock);
}

void ged_raise(struct ged_dev *dev, unsigned int vcpu)
{
	if (vcpu >= dev->nr_vcpus)
		return;
	pthread_mutex_lock(&dev->lock);
	dev->pending[vcpu / 32] |= 1u << (vcpu % 32);
	dev->stats.events++;
	pthread_mutex_unlock(&dev->lock);
	dev->irq.set_level(dev->irq.opaque, dev->irq.irq, 1);
	dev->irq.set_level(dev->irq.opaque, dev->irq.irq, 0);
}

void ged_get_stats(struct ged_dev *dev, struct ged_stats *out)
{
	pthread_mutex_lock(&dev->lock);
	*out = dev->stats;
	pthread_mutex_unlock(&dev->lock);
}

/* Called with the lock held. */
static void ignored(struct ged_dev *dev, const char *what, uint64_t offset, unsigned int len)
{
	dev->stats.ignored++;
	if (dev->warned)
		return;
	dev->warned = true;
	pr_warn("ged: guest %s of %u bytes at offset 0x%llx: expected 4-byte reads of the "
		"pending words 0x0-0x%x; ignored, further ones only counted", what, len,
		(unsigned long long)offset, (GED_PENDING_WORDS - 1) * 4);
}

static void ged_read(struct bus_device *bd, uint64_t offset, void *data, unsigned int len)
{
	struct ged_dev *dev = bd->priv;
	uint32_t v = 0;

	memset(data, 0, len);
	pthread_mutex_lock(&dev->lock);
	if (len == 4 && !(offset % 4) && offset < GED_PENDING_WORDS * 4) {
		v = dev->pending[offset / 4];
		dev->pending[offset / 4] = 0;
		dev->stats.reads++;
	} else {
		ignored(dev, "read", offset, len);
	}
	pthread_mutex_unlock(&dev->lock);
	if (len == 4)
		memcpy(data, &v, 4);
}

static void ged_write(struct bus_device *bd, uint64_t offset, const void *data, unsigned int len)
{
	struct ged_dev *dev = bd->priv;

	(void)data;
	pthread_mutex_lock(&dev->lock);
	ignored(dev, "write", offset, len);
	pthread_mutex_unlock(&dev->lock);
}

const struct bus_device_ops ged_bus_ops = {
	.name = "ged",
	.read = ged_read,
	.write = ged_write,
};
