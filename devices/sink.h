/* SPDX-License-Identifier: MIT */
/*
 * A claimed range that ignores writes and reads as all ones: for ports guests
 * poke on purpose with nothing behind them (port 0x80, the POST code / I/O
 * delay port Linux writes for every slow `outb_p`), so they are neither
 * logged as unclaimed nor slowed down by the unclaimed path.
 */
#ifndef CAPVISOR_DEVICES_SINK_H
#define CAPVISOR_DEVICES_SINK_H

#include "devices/bus.h"

#define PORT_POST 0x80

void sink_init(struct bus_device *dev, uint64_t base, uint64_t len);

#endif
