// SPDX-License-Identifier: MIT
/*
 * How a pCPU delivers work. By default continuously: level/1024 ns of work
 * per ns, the engine's own model. With a scenario's supply.duty_cycle the
 * way the dispatcher does (docs/dispatcher.md, "The duty cycle"): in every
 * window of W a pCPU at level P runs at full speed for the first P x W/1024
 * of its slot, which sits at a fixed offset, and delivers nothing else (a
 * pCPU at level 1024 is never stopped). The engine does not know; it still
 * charges time as if the supply were continuous, as it does on real hosts.
 * The dispatcher's latencies and its debt corrections are not modelled.
 */
#include "sim/sim.h"

/* On-time per window, rounded as dispatch/dutycycle.c rounds it. */
static uint64_t on_ns(const struct sim *sim, unsigned int level)
{
	uint64_t w = sim->sc->window_ns;

	return level >= 1024 ? w : w * level / 1024;
}

/*
 * Slots at offsets spread over what each window leaves free of the slot
 * (C x W/1024 at capacity C), so that windows and periods meet at many
 * phases across the pCPUs; any fixed offset is one the dispatcher may use.
 * The engine is told them too (cfg.dl_supply_charge), to charge
 * reservations what was delivered.
 */
void supply_init(struct sim *sim, struct sched_config *cfg)
{
	const struct sim_scenario *sc = sim->sc;
	uint64_t w = sc->window_ns;
	unsigned int c = 0;

	if (!sc->duty_cycle)
		return;
	cfg->dl_supply_charge = true;
	for (unsigned int ci = 0; ci < sc->topo.nr_clusters; ci++) {
		uint64_t slot = w * sc->topo.clusters[ci].capacity / 1024;

		for (unsigned int k = 0; k < sc->topo.clusters[ci].nr_cpus && c < SCHED_MAX_CPUS;
		     k++, c++)
			cfg->dl_supply_offset_ns[c] = (w - slot) * ((c * 7 + 3) % 10) / 10;
	}
}

/* On-time of cpu's on-parts in [0, t). */
static uint64_t on_before(const struct sim *sim, int cpu, uint64_t on, uint64_t t)
{
	uint64_t w = sim->sc->window_ns, in = t % w, off = sim->slot_offset[cpu];
	uint64_t part = in <= off ? 0 : in - off;

	return t / w * on + (part < on ? part : on);
}

uint64_t supply_work(const struct sim *sim, int cpu, unsigned int level, uint64_t t0,
		     uint64_t t1)
{
	uint64_t on;

	if (!sim->sc->duty_cycle)
		return (t1 - t0) * level;
	on = on_ns(sim, level);
	return (on_before(sim, cpu, on, t1) - on_before(sim, cpu, on, t0)) * 1024;
}

/* The first time by which cpu has delivered `work` (ns x 1024) from t0 on. */
uint64_t supply_done_at(const struct sim *sim, int cpu, unsigned int level, uint64_t t0,
			uint64_t work)
{
	uint64_t w = sim->sc->window_ns, on, target, k, r;

	if (!sim->sc->duty_cycle)
		return t0 + (work + level - 1) / level;
	on = on_ns(sim, level);
	if (!work)
		return t0;
	if (!on)
		return SIM_NO_EVENT;
	target = on_before(sim, cpu, on, t0) + (work + 1023) / 1024;
	k = target / on;
	r = target % on;
	if (!r)
		return (k - 1) * w + sim->slot_offset[cpu] + on;
	return k * w + sim->slot_offset[cpu] + r;
}
