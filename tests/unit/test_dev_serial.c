// SPDX-License-Identifier: MIT
/*
 * The 16550 UART, the ACPI sleep registers (S5 powers off) and the i8042
 * (reset and probe), driven through their bus ops.
 */
#include "devices/power.h"
#include "devices/serial.h"
#include "tests/unit/harness.h"
#include "capvisor/layout.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int irq_level = -1, irq_changes;

static void record_irq(void *opaque, unsigned int irq, int level)
{
	(void)opaque;
	CU_ASSERT_EQUAL(irq, IRQ_COM1);
	irq_level = level;
	irq_changes++;
}

struct uart {
	struct serial s;
	struct bus_device *dev;
	int pipe[2];
};

static void uart_open(struct uart *u)
{
	struct irq_line irq = { record_irq, NULL, IRQ_COM1 };

	CU_ASSERT_FATAL(pipe(u->pipe) == 0);
	irq_level = -1;
	irq_changes = 0;
	serial_init(&u->s, PORT_COM1, u->pipe[1], &irq);
	u->dev = &u->s.dev;
}

static void uart_close(struct uart *u)
{
	serial_destroy(&u->s);
	close(u->pipe[0]);
	close(u->pipe[1]);
}

static uint8_t rd(struct uart *u, unsigned int reg)
{
	uint8_t v;

	u->dev->ops->read(u->dev, reg, &v, 1);
	return v;
}

static void wr(struct uart *u, unsigned int reg, uint8_t v)
{
	u->dev->ops->write(u->dev, reg, &v, 1);
}

static void test_serial_transmits_to_fd(void)
{
	struct uart u;
	char buf[8] = { 0 };

	uart_open(&u);
	CU_ASSERT_EQUAL(u.dev->base, PORT_COM1);
	CU_ASSERT_EQUAL(u.dev->len, 8);
	wr(&u, 0, 'o');
	wr(&u, 0, 'k');
	CU_ASSERT_EQUAL(read(u.pipe[0], buf, sizeof(buf)), 2);
	CU_ASSERT_STRING_EQUAL(buf, "ok");
	CU_ASSERT_EQUAL(serial_tx_count(&u.s), 2);
	/* Transmission is instant: THRE and TEMT always set. */
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x60, 0x60);
	uart_close(&u);
}

static void test_serial_divisor_latch_and_scratch(void)
{
	struct uart u;
	char c;

	uart_open(&u);
	wr(&u, 3, 0x80);		/* DLAB */
	wr(&u, 0, 0x01);		/* DLL: not transmitted */
	wr(&u, 1, 0x02);		/* DLM: not IER */
	CU_ASSERT_EQUAL(rd(&u, 0), 0x01);
	CU_ASSERT_EQUAL(rd(&u, 1), 0x02);
	wr(&u, 3, 0x03);		/* 8N1, DLAB off */
	CU_ASSERT_EQUAL(rd(&u, 3), 0x03);
	CU_ASSERT_EQUAL(rd(&u, 1), 0x00);	/* IER untouched */
	wr(&u, 7, 0xa5);
	CU_ASSERT_EQUAL(rd(&u, 7), 0xa5);
	CU_ASSERT_EQUAL(serial_tx_count(&u.s), 0);
	CU_ASSERT_EQUAL(read(u.pipe[0], &c, 0), 0);
	uart_close(&u);
}

static void test_serial_receive_and_rx_interrupt(void)
{
	struct uart u;

	uart_open(&u);
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x01, 0);	/* no data */
	CU_ASSERT_EQUAL(rd(&u, 2) & 0x0f, 0x01);	/* no interrupt */
	wr(&u, 1, 0x01);			/* IER: RX data */
	CU_ASSERT_EQUAL(serial_rx(&u.s, (const uint8_t *)"hi", 2), 2);
	CU_ASSERT_EQUAL(irq_level, 1);
	CU_ASSERT_EQUAL(rd(&u, 2) & 0x0f, 0x04);	/* RX data available */
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x01, 0x01);
	CU_ASSERT_EQUAL(rd(&u, 0), 'h');
	CU_ASSERT_EQUAL(irq_level, 1);
	CU_ASSERT_EQUAL(rd(&u, 0), 'i');
	CU_ASSERT_EQUAL(irq_level, 0);		/* drained: line drops */
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x01, 0);
	uart_close(&u);
}

static void test_serial_thre_interrupt(void)
{
	struct uart u;
	char buf[4];

	uart_open(&u);
	wr(&u, 1, 0x02);			/* enabling THRI with empty THR raises it */
	CU_ASSERT_EQUAL(irq_level, 1);
	CU_ASSERT_EQUAL(rd(&u, 2) & 0x0f, 0x02);	/* reading IIR acknowledges it */
	CU_ASSERT_EQUAL(irq_level, 0);
	CU_ASSERT_EQUAL(rd(&u, 2) & 0x0f, 0x01);
	wr(&u, 0, 'x');				/* after a write THR is empty again */
	CU_ASSERT_EQUAL(irq_level, 1);
	wr(&u, 1, 0x00);
	CU_ASSERT_EQUAL(irq_level, 0);
	CU_ASSERT_EQUAL(read(u.pipe[0], buf, sizeof(buf)), 1);
	uart_close(&u);
}

static void test_serial_loopback_and_overrun(void)
{
	struct uart u;
	uint8_t big[1100];

	uart_open(&u);
	wr(&u, 4, 0x10 | 0x02 | 0x01);		/* loop, RTS, DTR */
	CU_ASSERT_EQUAL(rd(&u, 6) & 0xf0, 0x30);	/* CTS, DSR from RTS, DTR */
	wr(&u, 0, 'L');
	CU_ASSERT_EQUAL(rd(&u, 0), 'L');	/* looped back, not sent */
	CU_ASSERT_EQUAL(serial_tx_count(&u.s), 1);
	wr(&u, 4, 0);
	CU_ASSERT_EQUAL(rd(&u, 6), 0xb0);	/* DCD, DSR, CTS */
	memset(big, 'a', sizeof(big));
	CU_ASSERT_EQUAL(serial_rx(&u.s, big, sizeof(big)), 1024);
	CU_ASSERT_EQUAL(serial_rx_dropped(&u.s), sizeof(big) - 1024);
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x02, 0x02);	/* OE, cleared by the read */
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x02, 0);
	wr(&u, 2, 0x03);			/* FIFO on + clear RX */
	CU_ASSERT_EQUAL(rd(&u, 5) & 0x01, 0);
	CU_ASSERT_EQUAL(rd(&u, 2) & 0xc0, 0xc0);
	uart_close(&u);
}

static int power_events[2];

static void record_power(void *opaque, enum power_event ev)
{
	(void)opaque;
	power_events[ev]++;
}

static void test_acpi_sleep_s5_powers_off(void)
{
	struct power_ctl ctl = { record_power, NULL };
	struct acpi_pm pm;
	struct bus_device *d = &pm.dev;
	uint8_t v;

	/* The ports are the caller's to choose (vmm/vm_devices.c wires the FADT's). */
	acpi_pm_init(&pm, 0x1230, &ctl);
	CU_ASSERT_EQUAL(d->base, 0x1230);
	acpi_pm_init(&pm, PORT_ACPI_SLEEP_CTL, &ctl);
	memset(power_events, 0, sizeof(power_events));
	CU_ASSERT_EQUAL(d->base, PORT_ACPI_SLEEP_CTL);
	CU_ASSERT_EQUAL(d->len, 2);
	v = ACPI_S5_SLP_TYP << ACPI_SLP_TYP_SHIFT;	/* type without SLP_EN: nothing */
	d->ops->write(d, 0, &v, 1);
	v = (3 << ACPI_SLP_TYP_SHIFT) | ACPI_SLP_EN;	/* S3: ignored */
	d->ops->write(d, 0, &v, 1);
	v = (ACPI_S5_SLP_TYP << ACPI_SLP_TYP_SHIFT) | ACPI_SLP_EN;
	d->ops->write(d, 1, &v, 1);			/* status register: no effect */
	CU_ASSERT_EQUAL(power_events[POWER_OFF], 0);
	d->ops->write(d, 0, &v, 1);
	CU_ASSERT_EQUAL(power_events[POWER_OFF], 1);
	CU_ASSERT_EQUAL(power_events[POWER_RESET], 0);
}

static void test_i8042_reset_and_probe(void)
{
	struct power_ctl ctl = { record_power, NULL };
	struct i8042 k;
	struct bus_device *cmd = &k.cmd_dev, *data = &k.data_dev;
	uint8_t v;

	i8042_init(&k, PORT_I8042_DATA, PORT_I8042_CMD, &ctl);
	memset(power_events, 0, sizeof(power_events));
	CU_ASSERT_EQUAL(cmd->base, PORT_I8042_CMD);
	CU_ASSERT_EQUAL(data->base, PORT_I8042_DATA);
	cmd->ops->read(cmd, 0, &v, 1);
	CU_ASSERT_EQUAL(v & 0x03, 0);			/* nothing to read, ready for input */
	v = 0xaa;					/* self test */
	cmd->ops->write(cmd, 0, &v, 1);
	cmd->ops->read(cmd, 0, &v, 1);
	CU_ASSERT_EQUAL(v & 0x01, 0x01);
	data->ops->read(data, 0, &v, 1);
	CU_ASSERT_EQUAL(v, 0x55);
	cmd->ops->read(cmd, 0, &v, 1);
	CU_ASSERT_EQUAL(v & 0x01, 0);
	v = 0x60;					/* write CTR, then read it back */
	cmd->ops->write(cmd, 0, &v, 1);
	v = 0x47;
	data->ops->write(data, 0, &v, 1);
	v = 0x20;
	cmd->ops->write(cmd, 0, &v, 1);
	data->ops->read(data, 0, &v, 1);
	CU_ASSERT_EQUAL(v, 0x47);
	CU_ASSERT_EQUAL(power_events[POWER_RESET], 0);
	v = I8042_CMD_RESET;
	cmd->ops->write(cmd, 0, &v, 1);
	CU_ASSERT_EQUAL(power_events[POWER_RESET], 1);
	CU_ASSERT_EQUAL(power_events[POWER_OFF], 0);
	i8042_destroy(&k);
}

UNIT_SUITE(dev_serial, NULL, NULL,
	   UNIT_TEST(test_serial_transmits_to_fd),
	   UNIT_TEST(test_serial_divisor_latch_and_scratch),
	   UNIT_TEST(test_serial_receive_and_rx_interrupt),
	   UNIT_TEST(test_serial_thre_interrupt),
	   UNIT_TEST(test_serial_loopback_and_overrun),
	   UNIT_TEST(test_acpi_sleep_s5_powers_off),
	   UNIT_TEST(test_i8042_reset_and_probe))
