/* SPDX-License-Identifier: MIT */
/*
 * I/O-port and MMIO buses (kvmtool's model): a device registers an address
 * range with an ops table; the vCPU run loop hands every PIO/MMIO exit to
 * bus_read()/bus_write(). Unclaimed accesses read as all ones, are counted,
 * logged once per address, and are never fatal.
 */
#ifndef CAPVISOR_BUS_H
#define CAPVISOR_BUS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bus_device;

struct bus_device_ops {
	const char *name;
	/* len is 1, 2, 4 or 8; offset is relative to the device's base. */
	void (*read)(struct bus_device *dev, uint64_t offset, void *data, unsigned int len);
	void (*write)(struct bus_device *dev, uint64_t offset, const void *data, unsigned int len);
};

struct bus_device {
	const struct bus_device_ops *ops;
	uint64_t base;
	uint64_t len;
	void *priv;		/* the device's own state */
};

struct bus;

struct bus *bus_new(const char *name);	/* "pio" or "mmio", for messages */
void bus_free(struct bus *bus);
/* -EEXIST if the range overlaps a registered device, -EINVAL if empty. */
int bus_register(struct bus *bus, struct bus_device *dev);
/* Returns true when a device claimed the access. */
bool bus_read(struct bus *bus, uint64_t addr, void *data, unsigned int len);
bool bus_write(struct bus *bus, uint64_t addr, const void *data, unsigned int len);
uint64_t bus_unclaimed_count(const struct bus *bus);

#endif
