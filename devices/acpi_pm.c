// SPDX-License-Identifier: MIT
/*
 * HW-reduced ACPI sleep registers (FADT SLEEP_CONTROL_REG/SLEEP_STATUS_REG,
 * one byte each). The guest's \_S5 package gives SLP_TYP; writing it with
 * SLP_EN powers off. Other sleep states are not supported: they are logged
 * once and ignored, so a guest trying S3 keeps running instead of dying.
 */
#include "devices/power.h"
#include "capvisor/layout.h"
#include "util/log.h"

#include <stdbool.h>

#define SLP_TYP_MASK	(7u << ACPI_SLP_TYP_SHIFT)
#define SLEEP_STS_WAK	0x80	/* WAK_STS */

static void acpi_pm_read(struct bus_device *dev, uint64_t offset, void *data, unsigned int len)
{
	uint8_t *out = data;

	(void)dev;
	(void)offset;
	/* Control reads as 0; status has no wake event pending. */
	for (unsigned int i = 0; i < len; i++)
		out[i] = 0;
}

static void acpi_pm_write(struct bus_device *dev, uint64_t offset, const void *data,
			  unsigned int len)
{
	struct acpi_pm *pm = dev->priv;
	uint8_t v = *(const uint8_t *)data;
	unsigned int typ;

	(void)len;
	if (offset != 0 || !(v & ACPI_SLP_EN))
		return;	/* status writes clear WAK_STS, which is never set */
	typ = (v & SLP_TYP_MASK) >> ACPI_SLP_TYP_SHIFT;
	if (typ == ACPI_S5_SLP_TYP) {
		pm->ctl.request(pm->ctl.opaque, POWER_OFF);
		return;
	}
	if (!pm->warned) {
		pm->warned = true;
		pr_warn("acpi: guest asked for sleep type %u; only S5 (type %u) is supported, ignored",
			typ, ACPI_S5_SLP_TYP);
	}
}

static const struct bus_device_ops acpi_pm_ops = {
	.name = "acpi-sleep",
	.read = acpi_pm_read,
	.write = acpi_pm_write,
};

void acpi_pm_init(struct acpi_pm *pm, uint64_t base, const struct power_ctl *ctl)
{
	*pm = (struct acpi_pm){
		.dev = { .ops = &acpi_pm_ops, .base = base, .len = ACPI_PM_NR_PORTS, .priv = pm },
		.ctl = *ctl,
	};
}
