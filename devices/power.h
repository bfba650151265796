/* SPDX-License-Identifier: MIT */
/*
 * Poweroff and reset requests from devices (ACPI sleep registers, the i8042
 * reset line) to whoever owns the VM's lifecycle.
 */
#ifndef CAPVISOR_DEVICES_POWER_H
#define CAPVISOR_DEVICES_POWER_H

#include "devices/bus.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

enum power_event {
	POWER_OFF,
	POWER_RESET,
};

struct power_ctl {
	void (*request)(void *opaque, enum power_event ev);
	void *opaque;
};

/*
 * The HW-reduced ACPI sleep control and status registers, one port each
 * from base (the FADT's SLEEP_CONTROL_REG and SLEEP_STATUS_REG): SLP_EN
 * with SLP_TYP == ACPI_S5_SLP_TYP powers off.
 */
#define ACPI_PM_NR_PORTS	2

struct acpi_pm {
	struct bus_device dev;		/* register this on the PIO bus */
	struct power_ctl ctl;
	bool warned;
};

void acpi_pm_init(struct acpi_pm *pm, uint64_t base, const struct power_ctl *ctl);

/*
 * A minimal i8042: status and a few controller commands so that probing
 * guests do not spin, and command 0xFE pulses reset. The data port and
 * the command/status port (0x60 and 0x64 on a PC) are two devices.
 */
struct i8042 {
	pthread_mutex_t lock;
	struct bus_device data_dev, cmd_dev;	/* register both on the PIO bus */
	struct power_ctl ctl;
	uint8_t status, ctr, out;
	uint8_t pending_cmd;	/* command waiting for its data byte, or 0 */
};

void i8042_init(struct i8042 *kbc, uint64_t data_port, uint64_t cmd_port,
		const struct power_ctl *ctl);
void i8042_destroy(struct i8042 *kbc);

#endif
