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

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERIAL_NR_PORTS	8

/* Host-side receive buffer; the guest sees it through RBR/LSR.DR. */
#define RX_BUF_SIZE	1024

struct serial {
	struct bus_device dev;		/* register this on the PIO bus */
	pthread_mutex_t lock;
	struct irq_line irq;
	bool has_irq;
	int out_fd;
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	bool overrun;		/* LSR.OE, cleared when LSR is read */
	bool thr_ipending;	/* THR empty interrupt pending */
	int irq_level;
	uint8_t rx[RX_BUF_SIZE];
	size_t rx_head, rx_count;
	uint64_t rx_dropped, tx_count, tx_dropped;
};

/*
 * Registers at base..base+7 (PORT_COM1 for the PC's COM1); out_fd receives
 * transmitted bytes (serial_destroy() does not close it); irq may be NULL.
 */
void serial_init(struct serial *s, uint64_t base, int out_fd, const struct irq_line *irq);
void serial_destroy(struct serial *s);
/*
 * Queue received bytes; returns how many were accepted (the rest is dropped
 * because the receive buffer is full, and counted).
 */
size_t serial_rx(struct serial *s, const uint8_t *buf, size_t len);
uint64_t serial_rx_dropped(struct serial *s);
/* Bytes the guest has transmitted so far. */
uint64_t serial_tx_count(struct serial *s);

#endif
