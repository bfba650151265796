// SPDX-License-Identifier: MIT
/*
 * Polled 16550 output on COM1. Every exit costs microseconds here, so the
 * line status is checked once per 16-byte FIFO load rather than per byte,
 * and each load is one `rep outsb`.
 * A spinlock keeps lines from different vCPUs whole.
 */
#include "guest/kernel.h"

#define UART_THR	0
#define UART_IER	1
#define UART_FCR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define LSR_THRE	0x20
#define UART_FIFO	16
#define SERIAL_LOCK_SPINS 100000

static volatile u32 serial_lock;

void serial_init(void)
{
	outb(PORT_COM1 + UART_IER, 0);		/* polled: no interrupts */
	outb(PORT_COM1 + UART_LCR, 0x03);	/* 8N1 */
	outb(PORT_COM1 + UART_FCR, 0x07);	/* enable and clear FIFOs */
	outb(PORT_COM1 + UART_MCR, 0x03);	/* DTR, RTS */
}

static void wait_fifo_empty(void)
{
	/* Bounded: a UART that never drains must not hang the guest. */
	for (int i = 0; i < 100000; i++) {
		if (inb(PORT_COM1 + UART_LSR) & LSR_THRE)
			return;
		cpu_relax();
	}
}

/*
 * One `rep outsb` per FIFO load: KVM hands the VMM the whole string in one
 * I/O exit (io.count), so a line costs a few exits instead of one per byte.
 */
static void put_chars(const char *s, size_t len)
{
	while (len) {
		size_t n = len < UART_FIFO ? len : UART_FIFO;

		wait_fifo_empty();
		asm volatile("rep outsb" : "+S"(s), "+c"(n) : "d"((u16)(PORT_COM1 + UART_THR))
			     : "memory");
		len -= len < UART_FIFO ? len : UART_FIFO;
	}
}

/*
 * Write s (len bytes, no newline) and a newline as one uninterrupted line.
 * The wait for the lock is bounded (~0.1 s of emulated ring 0; a line takes
 * about 1 ms): a CPU that dies holding it (an exception report) must not
 * silence the others for good.
 */
void serial_write_line(const char *s, size_t len)
{
	int locked = 0;

	for (int i = 0; i < SERIAL_LOCK_SPINS && !locked; i++) {
		locked = !__atomic_exchange_n(&serial_lock, 1, __ATOMIC_ACQUIRE);
		if (!locked)
			cpu_relax();
	}
	put_chars(s, len);
	if (len % UART_FIFO)	/* the last FIFO load has room for the newline */
		outb(PORT_COM1 + UART_THR, '\n');
	else
		put_chars("\n", 1);
	if (locked)
		__atomic_store_n(&serial_lock, 0, __ATOMIC_RELEASE);
}

void kprint(const char *f, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, f);
	n = vfmt(buf, sizeof(buf), f, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	serial_write_line(buf, (size_t)n);
}
