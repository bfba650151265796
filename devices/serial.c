// SPDX-License-Identifier: MIT
/*
 * 16550A UART. Transmission completes instantly (the byte is written to the
 * output fd on the THR write), so THRE/TEMT always read as set and the THR
 * empty interrupt fires right after every write, as QEMU and kvmtool do.
 */
#include "devices/serial.h"
#include "util/log.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* Register offsets. */
#define UART_RBR_THR	0	/* DLL when DLAB */
#define UART_IER	1	/* DLM when DLAB */
#define UART_IIR_FCR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_MSR	6
#define UART_SCR	7

#define IER_RDI		0x01
#define IER_THRI	0x02
#define IER_RLSI	0x04
#define IER_MASK	0x0f

#define IIR_NO_INT	0x01
#define IIR_THRI	0x02
#define IIR_RDI		0x04
#define IIR_RLSI	0x06
#define IIR_FIFO_ON	0xc0

#define FCR_ENABLE	0x01
#define FCR_CLEAR_RX	0x02

#define LCR_DLAB	0x80

#define MCR_DTR		0x01
#define MCR_RTS		0x02
#define MCR_OUT1	0x04
#define MCR_OUT2	0x08
#define MCR_LOOP	0x10
#define MCR_MASK	0x1f

#define LSR_DR		0x01
#define LSR_OE		0x02
#define LSR_THRE	0x20
#define LSR_TEMT	0x40

#define MSR_CTS		0x10
#define MSR_DSR		0x20
#define MSR_RI		0x40
#define MSR_DCD		0x80


static uint8_t serial_iir(const struct serial *s)
{
	uint8_t fifo = (s->fcr & FCR_ENABLE) ? IIR_FIFO_ON : 0;

	if ((s->ier & IER_RLSI) && s->overrun)
		return IIR_RLSI | fifo;
	if ((s->ier & IER_RDI) && s->rx_count)
		return IIR_RDI | fifo;
	if ((s->ier & IER_THRI) && s->thr_ipending)
		return IIR_THRI | fifo;
	return IIR_NO_INT | fifo;
}

/* Called with the lock held after every state change. */
static void serial_update_irq(struct serial *s)
{
	int level = !(serial_iir(s) & IIR_NO_INT);

	if (level == s->irq_level)
		return;
	s->irq_level = level;
	if (s->has_irq)
		s->irq.set_level(s->irq.opaque, s->irq.irq, level);
}

static void rx_push(struct serial *s, uint8_t c)
{
	if (s->rx_count == RX_BUF_SIZE) {
		s->overrun = true;
		s->rx_dropped++;
		return;
	}
	s->rx[(s->rx_head + s->rx_count) % RX_BUF_SIZE] = c;
	s->rx_count++;
}

static uint8_t rx_pop(struct serial *s)
{
	uint8_t c;

	if (!s->rx_count)
		return 0;
	c = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % RX_BUF_SIZE;
	s->rx_count--;
	return c;
}

static void transmit(struct serial *s, uint8_t c)
{
	s->tx_count++;
	if (s->mcr & MCR_LOOP) {
		rx_push(s, c);
		return;
	}
	/*
	 * One attempt: a console that fails loses output, never the guest. A
	 * write blocked on a full console returns EINTR when the vCPU is kicked
	 * (no SA_RESTART); retrying would block again and could hold up a stop,
	 * so that byte is dropped instead.
	 */
	if (write(s->out_fd, &c, 1) != 1)
		s->tx_dropped++;
}

static uint8_t serial_msr(const struct serial *s)
{
	uint8_t msr = 0;

	if (!(s->mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	if (s->mcr & MCR_RTS)
		msr |= MSR_CTS;
	if (s->mcr & MCR_DTR)
		msr |= MSR_DSR;
	if (s->mcr & MCR_OUT1)
		msr |= MSR_RI;
	if (s->mcr & MCR_OUT2)
		msr |= MSR_DCD;
	return msr;
}

static uint8_t serial_read_reg(struct serial *s, uint64_t reg)
{
	uint8_t v, lsr;

	switch (reg) {
	case UART_RBR_THR:
		return (s->lcr & LCR_DLAB) ? s->dll : rx_pop(s);
	case UART_IER:
		return (s->lcr & LCR_DLAB) ? s->dlm : s->ier;
	case UART_IIR_FCR:
		v = serial_iir(s);
		if ((v & 0x0f) == IIR_THRI)
			s->thr_ipending = false;	/* reading IIR acknowledges THRE */
		return v;
	case UART_LCR:
		return s->lcr;
	case UART_MCR:
		return s->mcr;
	case UART_LSR:
		lsr = LSR_THRE | LSR_TEMT;
		if (s->rx_count)
			lsr |= LSR_DR;
		if (s->overrun)
			lsr |= LSR_OE;
		s->overrun = false;
		return lsr;
	case UART_MSR:
		return serial_msr(s);
	default:
		return s->scr;
	}
}

static void serial_write_reg(struct serial *s, uint64_t reg, uint8_t v)
{
	switch (reg) {
	case UART_RBR_THR:
		if (s->lcr & LCR_DLAB) {
			s->dll = v;
			break;
		}
		transmit(s, v);
		s->thr_ipending = true;
		break;
	case UART_IER:
		if (s->lcr & LCR_DLAB) {
			s->dlm = v;
			break;
		}
		/* Enabling THRI with an empty THR raises it at once (8250 behaviour). */
		if (!(s->ier & IER_THRI) && (v & IER_THRI))
			s->thr_ipending = true;
		s->ier = v & IER_MASK;
		break;
	case UART_IIR_FCR:
		s->fcr = v & FCR_ENABLE;
		if (v & FCR_CLEAR_RX) {
			s->rx_head = s->rx_count = 0;
		}
		break;
	case UART_LCR:
		s->lcr = v;
		break;
	case UART_MCR:
		s->mcr = v & MCR_MASK;
		break;
	case UART_LSR:
	case UART_MSR:
		break;	/* read-only; writes are ignored as on real parts */
	default:
		s->scr = v;
		break;
	}
}

static void serial_read(struct bus_device *dev, uint64_t offset, void *data, unsigned int len)
{
	struct serial *s = dev->priv;
	uint8_t *out = data;

	pthread_mutex_lock(&s->lock);
	out[0] = serial_read_reg(s, offset);
	for (unsigned int i = 1; i < len; i++)
		out[i] = 0xff;	/* registers are 8 bits wide */
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static void serial_write(struct bus_device *dev, uint64_t offset, const void *data, unsigned int len)
{
	struct serial *s = dev->priv;

	(void)len;	/* wider writes use their low byte, as on real parts */
	pthread_mutex_lock(&s->lock);
	serial_write_reg(s, offset, *(const uint8_t *)data);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static const struct bus_device_ops serial_ops = {
	.name = "serial-16550a",
	.read = serial_read,
	.write = serial_write,
};

void serial_init(struct serial *s, uint64_t base, int out_fd, const struct irq_line *irq)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->out_fd = out_fd;
	if (irq) {
		s->irq = *irq;
		s->has_irq = true;
	}
	s->dev = (struct bus_device){ .ops = &serial_ops, .base = base,
				      .len = SERIAL_NR_PORTS, .priv = s };
}

void serial_destroy(struct serial *s)
{
	pthread_mutex_destroy(&s->lock);
}

size_t serial_rx(struct serial *s, const uint8_t *buf, size_t len)
{
	size_t accepted;

	pthread_mutex_lock(&s->lock);
	accepted = RX_BUF_SIZE - s->rx_count;
	if (accepted > len)
		accepted = len;
	for (size_t i = 0; i < len; i++)
		rx_push(s, buf[i]);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return accepted;
}

uint64_t serial_rx_dropped(struct serial *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->rx_dropped;
	pthread_mutex_unlock(&s->lock);
	return n;
}

uint64_t serial_tx_count(struct serial *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->tx_count;
	pthread_mutex_unlock(&s->lock);
	return n;
}
