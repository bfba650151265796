// SPDX-License-Identifier: MIT
/*
 * The sink (devices/sink.h): a range that reads as all ones and drops writes,
 * for ports a guest pokes with nothing behind them.
 */
#include "devices/sink.h"

#include <string.h>

static void sink_read(struct bus_device *dev, uint64_t offset, void *data, unsigned int len)
{
	(void)dev;
	(void)offset;
	memset(data, 0xff, len);
}

static void sink_write(struct bus_device *dev, uint64_t offset, const void *data, unsigned int len)
{
	(void)dev;
	(void)offset;
	(void)data;
	(void)len;
}

static const struct bus_device_ops sink_ops = {
	.name = "sink",
	.read = sink_read,
	.write = sink_write,
};

void sink_init(struct bus_device *dev, uint64_t base, uint64_t len)
{
	*dev = (struct bus_device){ .ops = &sink_ops, .base = base, .len = len };
}
