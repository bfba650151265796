/* SPDX-License-Identifier: MIT */
/*
 * 16550A UART (the PC's COM1). Transmitted bytes go to an output fd at once;
 * received bytes are queued by the main thread with serial_rx(). Thread-safe:
 * vCPU threads access the registers while the main thread feeds input.
 */
#ifndef CAPVISOR_DEVICES_SERIAL_H
#define CAPVISOR_DEVICES_SERIAL_H

#include "devices/bus.h"
#include "devices/irq.h"

#include <stddef.h>
#include <stdint.h>

#define SERIAL_NR_PORTS	8

struct serial;

/* out_fd receives transmitted bytes (not closed by serial_free); irq may be NULL. */
struct serial *serial_new(int out_fd, const struct irq_line *irq);
void serial_free(struct serial *s);
/* The device to register on the PIO bus at base (e.g. PORT_COM1). */
struct bus_device *serial_bus_device(struct serial *s, uint64_t base);
/*
 * Queue received bytes; returns how many were accepted (the rest is dropped
 * because the receive buffer is full, and counted).
 */
size_t serial_rx(struct serial *s, const uint8_t *buf, size_t len);
uint64_t serial_rx_dropped(struct serial *s);
/* Bytes the guest has transmitted so far. */
uint64_t serial_tx_count(struct serial *s);

#endif
