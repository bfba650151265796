/* SPDX-License-Identifier: MIT */
/*
 * Poweroff and reset requests from devices (ACPI sleep registers, the i8042
 * reset line) to whoever owns the VM's lifecycle.
 */
#ifndef CAPVISOR_DEVICES_POWER_H
#define CAPVISOR_DEVICES_POWER_H

#include "devices/bus.h"

enum power_event {
	POWER_OFF,
	POWER_RESET,
};

struct power_ctl {
	void (*request)(void *opaque, enum power_event ev);
	void *opaque;
};

/*
 * The HW-reduced ACPI sleep control/status registers at PORT_ACPI_SLEEP_CTL
 * and PORT_ACPI_SLEEP_STS: SLP_EN with SLP_TYP == ACPI_S5_SLP_TYP powers off.
 */
struct acpi_pm;
struct acpi_pm *acpi_pm_new(const struct power_ctl *ctl);
void acpi_pm_free(struct acpi_pm *pm);
struct bus_device *acpi_pm_bus_device(struct acpi_pm *pm);

/*
 * A minimal i8042 at ports 0x60/0x64: status and a few controller commands
 * so that probing guests do not spin, and command 0xFE pulses reset.
 */
struct i8042;
struct i8042 *i8042_new(const struct power_ctl *ctl);
void i8042_free(struct i8042 *kbc);
/* The data port (0x60) and the command/status port (0x64) are two devices. */
struct bus_device *i8042_data_device(struct i8042 *kbc);
struct bus_device *i8042_cmd_device(struct i8042 *kbc);

#endif
