// SPDX-License-Identifier: MIT
/*
 * I/O-port and MMIO buses: a sorted array of non-overlapping ranges, looked
 * up by binary search under a read lock (vCPU threads dispatch concurrently;
 * registration happens at VM setup and takes the write lock).
 */
#include "devices/bus.h"
#include "util/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Unclaimed addresses are logged once each; beyond this many we stop logging. */
#define BUS_MAX_LOGGED 64

struct bus {
	const char *name;
	pthread_rwlock_t lock;
	struct bus_device **devs;	/* sorted by base, non-overlapping */
	size_t nr, cap;
	atomic_uint_fast64_t unclaimed;
	pthread_mutex_t log_lock;	/* protects logged[] */
	uint64_t logged[BUS_MAX_LOGGED];
	size_t nr_logged;
	bool log_full;
};

struct bus *bus_new(const char *name)
{
	struct bus *bus = calloc(1, sizeof(*bus));

	if (!bus)
		return NULL;
	bus->name = name;
	pthread_rwlock_init(&bus->lock, NULL);
	pthread_mutex_init(&bus->log_lock, NULL);
	return bus;
}

void bus_free(struct bus *bus)
{
	if (!bus)
		return;
	pthread_rwlock_destroy(&bus->lock);
	pthread_mutex_destroy(&bus->log_lock);
	free(bus->devs);
	free(bus);
}

static uint64_t dev_last(const struct bus_device *dev)
{
	return dev->base + (dev->len - 1);
}

/* Index of the first device whose last address is >= addr (nr if none). */
static size_t lower_bound(const struct bus *bus, uint64_t addr)
{
	size_t lo = 0, hi = bus->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dev_last(bus->devs[mid]) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bus_register(struct bus *bus, struct bus_device *dev)
{
	size_t pos;
	int ret = 0;

	if (!dev || !dev->ops || !dev->len || dev->base + (dev->len - 1) < dev->base)
		return -EINVAL;
	pthread_rwlock_wrlock(&bus->lock);
	pos = lower_bound(bus, dev->base);
	if (pos < bus->nr && bus->devs[pos]->base <= dev_last(dev)) {
		ret = -EEXIST;
		goto out;
	}
	if (bus->nr == bus->cap) {
		size_t cap = bus->cap ? bus->cap * 2 : 8;
		struct bus_device **devs = realloc(bus->devs, cap * sizeof(*devs));

		if (!devs) {
			ret = -ENOMEM;
			goto out;
		}
		bus->devs = devs;
		bus->cap = cap;
	}
	memmove(&bus->devs[pos + 1], &bus->devs[pos], (bus->nr - pos) * sizeof(*bus->devs));
	bus->devs[pos] = dev;
	bus->nr++;
out:
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

/* The device covering [addr, addr + len), or NULL. Caller holds the lock. */
static struct bus_device *find(const struct bus *bus, uint64_t addr, unsigned int len)
{
	size_t pos = lower_bound(bus, addr);
	struct bus_device *dev;

	if (pos == bus->nr)
		return NULL;
	dev = bus->devs[pos];
	if (addr < dev->base || addr + (len - 1) < addr || addr + (len - 1) > dev_last(dev))
		return NULL;
	return dev;
}

static void note_unclaimed(struct bus *bus, uint64_t addr, unsigned int len, bool write)
{
	bool first = true;

	atomic_fetch_add(&bus->unclaimed, 1);
	pthread_mutex_lock(&bus->log_lock);
	for (size_t i = 0; i < bus->nr_logged; i++)
		if (bus->logged[i] == addr)
			first = false;
	if (first && bus->nr_logged < BUS_MAX_LOGGED) {
		bus->logged[bus->nr_logged++] = addr;
		pr_warn("%s bus: unclaimed %u-byte %s at %#llx (ignored; logged once per address)",
			bus->name, len, write ? "write" : "read", (unsigned long long)addr);
	} else if (first && !bus->log_full) {
		bus->log_full = true;
		pr_warn("%s bus: more than %d unclaimed addresses; no longer logging them",
			bus->name, BUS_MAX_LOGGED);
	}
	pthread_mutex_unlock(&bus->log_lock);
}

bool bus_read(struct bus *bus, uint64_t addr, void *data, unsigned int len)
{
	struct bus_device *dev;

	pthread_rwlock_rdlock(&bus->lock);
	dev = len ? find(bus, addr, len) : NULL;
	if (dev && dev->ops->read)
		dev->ops->read(dev, addr - dev->base, data, len);
	else if (dev)
		memset(data, 0xff, len);
	pthread_rwlock_unlock(&bus->lock);
	if (!dev) {
		memset(data, 0xff, len);
		note_unclaimed(bus, addr, len, false);
	}
	return dev != NULL;
}

bool bus_write(struct bus *bus, uint64_t addr, const void *data, unsigned int len)
{
	struct bus_device *dev;

	pthread_rwlock_rdlock(&bus->lock);
	dev = len ? find(bus, addr, len) : NULL;
	if (dev && dev->ops->write)
		dev->ops->write(dev, addr - dev->base, data, len);
	pthread_rwlock_unlock(&bus->lock);
	if (!dev)
		note_unclaimed(bus, addr, len, true);
	return dev != NULL;
}

uint64_t bus_unclaimed_count(const struct bus *bus)
{
	return atomic_load(&((struct bus *)bus)->unclaimed);
}
