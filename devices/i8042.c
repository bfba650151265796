// SPDX-License-Identifier: MIT
/*
 * A minimal i8042 keyboard controller: enough controller commands that a
 * probing guest gets answers instead of timeouts, no keyboard behind it, and
 * the reset line (command 0xFE, or the output port's bit 0 via 0xD1), which is
 * also the FADT reset register. No interrupts are raised.
 */
#include "devices/power.h"
#include "capvisor/layout.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>


#define STS_OBF			0x01	/* output buffer full */
#define STS_SYS			0x04	/* system flag: self-test passed */
#define STS_CMD			0x08	/* last write was a command */

#define CMD_READ_CTR		0x20
#define CMD_WRITE_CTR		0x60
#define CMD_AUX_DISABLE		0xa7
#define CMD_AUX_ENABLE		0xa8
#define CMD_AUX_TEST		0xa9
#define CMD_SELF_TEST		0xaa
#define CMD_KBD_TEST		0xab
#define CMD_KBD_DISABLE		0xad
#define CMD_KBD_ENABLE		0xae
#define CMD_WRITE_OUTPUT	0xd1
#define CMD_PULSE_FIRST		0xf0	/* 0xf0..0xff: pulse output lines whose bit is 0 */

#define CTR_KBD_DISABLED	0x10
#define CTR_AUX_DISABLED	0x20
#define OUTPUT_RESET_LINE	0x01	/* 0: CPU held in reset */

static void put_output(struct i8042 *k, uint8_t v)
{
	k->out = v;
	k->status |= STS_OBF;
}

/* Returns true when the command asks for a reset. */
static bool i8042_command(struct i8042 *k, uint8_t cmd)
{
	k->status |= STS_CMD;
	switch (cmd) {
	case CMD_READ_CTR:
		put_output(k, k->ctr);
		break;
	case CMD_WRITE_CTR:
	case CMD_WRITE_OUTPUT:
		k->pending_cmd = cmd;
		break;
	case CMD_SELF_TEST:
		k->status |= STS_SYS;
		put_output(k, 0x55);
		break;
	case CMD_KBD_TEST:
	case CMD_AUX_TEST:
		put_output(k, 0x00);
		break;
	case CMD_KBD_DISABLE:
		k->ctr |= CTR_KBD_DISABLED;
		break;
	case CMD_KBD_ENABLE:
		k->ctr &= ~CTR_KBD_DISABLED;
		break;
	case CMD_AUX_DISABLE:
		k->ctr |= CTR_AUX_DISABLED;
		break;
	case CMD_AUX_ENABLE:
		k->ctr &= ~CTR_AUX_DISABLED;
		break;
	default:
		if (cmd >= CMD_PULSE_FIRST && !(cmd & OUTPUT_RESET_LINE))
			return true;	/* 0xfe and friends pulse the reset line */
		break;
	}
	return false;
}

/* Returns true when the data byte asks for a reset. */
static bool i8042_data(struct i8042 *k, uint8_t v)
{
	uint8_t cmd = k->pending_cmd;

	k->status &= ~STS_CMD;
	k->pending_cmd = 0;
	if (cmd == CMD_WRITE_CTR)
		k->ctr = v;
	else if (cmd == CMD_WRITE_OUTPUT)
		return !(v & OUTPUT_RESET_LINE);
	/* Bytes for the (absent) keyboard get no answer, like an empty port. */
	return false;
}

static void i8042_read(struct bus_device *dev, uint64_t offset, void *data, unsigned int len)
{
	struct i8042 *k = dev->priv;
	uint8_t *out = data;

	(void)offset;
	pthread_mutex_lock(&k->lock);
	if (dev == &k->cmd_dev) {
		out[0] = k->status;
	} else {
		out[0] = k->out;
		k->status &= ~STS_OBF;
	}
	pthread_mutex_unlock(&k->lock);
	for (unsigned int i = 1; i < len; i++)
		out[i] = 0xff;
}

static void i8042_write(struct bus_device *dev, uint64_t offset, const void *data, unsigned int len)
{
	struct i8042 *k = dev->priv;
	uint8_t v = *(const uint8_t *)data;
	bool reset;

	(void)offset;
	(void)len;
	pthread_mutex_lock(&k->lock);
	reset = dev == &k->cmd_dev ? i8042_command(k, v) : i8042_data(k, v);
	pthread_mutex_unlock(&k->lock);
	if (reset)
		k->ctl.request(k->ctl.opaque, POWER_RESET);
}

static const struct bus_device_ops i8042_ops = {
	.name = "i8042",
	.read = i8042_read,
	.write = i8042_write,
};

void i8042_init(struct i8042 *k, uint64_t data_port, uint64_t cmd_port,
		const struct power_ctl *ctl)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	k->ctl = *ctl;
	k->status = STS_SYS;
	k->ctr = CTR_KBD_DISABLED | CTR_AUX_DISABLED;
	k->data_dev = (struct bus_device){ .ops = &i8042_ops, .base = data_port, .len = 1,
					   .priv = k };
	k->cmd_dev = (struct bus_device){ .ops = &i8042_ops, .base = cmd_port, .len = 1,
					  .priv = k };
}

void i8042_destroy(struct i8042 *k)
{
	pthread_mutex_destroy(&k->lock);
}
