# SPDX-License-Identifier: MIT
"""Independent schedulability oracle for reservations (partitioned EDF).

Written from the rule in docs/sched.md, not from the engine's code: a set of
reservations can be kept when each can be given one pCPU of its affinity so
that on every pCPU sum(runtime/(deadline - blackout)) x 1024/capacity <=
limit (0.95). The blackout is what the scenario's `supply` says a pCPU may
deliver nothing for: window - on-part + latency, the on-part being
capacity x window/1024 (none at capacity 1024); 0 without a supply, which
leaves runtime/deadline (density). Exact rational arithmetic and an
exhaustive search; meant for the small scenarios of the tests (up to ~12
reservations on ~8 pCPUs).
"""
from fractions import Fraction

LIMIT = Fraction(95, 100)


def blackout_us(sc, capacity):
    sup = sc.get("supply", {})
    w, lat = sup.get("window_us", 0), sup.get("latency_us", 0)
    on = w if capacity >= 1024 else Fraction(w * 1000 * capacity // 1024, 1000)
    return w - on + lat


def density(r, blackout=0):
    """runtime / (deadline - blackout) (the deadline defaults to the period); None: no fit."""
    d = r.get("deadline_us", r["period_us"]) - blackout
    return Fraction(r["runtime_us"]) / d if d > 0 else None


def host_cpus(sc):
    """[(cluster name, capacity)] for every pCPU, in pCPU id order."""
    return [(c["name"], c["capacity"]) for c in sc["host"]["clusters"] for _ in range(c["cpus"])]


def allowed_cpus(spec, cpus):
    return [i for i, (name, _) in enumerate(cpus) if "cluster" not in spec or spec["cluster"] == name]


def item(sc, r, spec, cpus):
    """(loads, allowed): the share of each allowed pCPU's capacity the reservation needs."""
    allowed, loads = [], {}
    for c in allowed_cpus(spec, cpus):
        d = density(r, blackout_us(sc, cpus[c][1]))
        allowed.append(c)
        loads[c] = None if d is None else d * 1024 / cpus[c][1]
    return loads, allowed


def fits_alone(loads, allowed, margin=Fraction(0)):
    return any(loads[i] is not None and loads[i] <= LIMIT - margin for i in allowed)


def placement(items, cpus, margin=Fraction(0)):
    """A list of pCPUs (one per item) keeping every pCPU within LIMIT - margin, or None.

    items: [({pCPU: load or None}, [allowed pCPU ids])], from item()."""
    def biggest(k):
        return -min((v for v in items[k][0].values() if v is not None), default=0)

    order = sorted(range(len(items)), key=biggest)
    load = [Fraction(0)] * len(cpus)
    where = [None] * len(items)

    def go(n):
        if n == len(order):
            return True
        loads, allowed = items[order[n]]
        seen_empty = set()
        for c in allowed:
            if loads[c] is None:
                continue
            if load[c] == 0:
                # Empty pCPUs of one capacity that the remaining items treat alike are the same.
                key = (cpus[c][1], tuple(c in items[order[m]][1] for m in range(n, len(order))))
                if key in seen_empty:
                    continue
                seen_empty.add(key)
            new = load[c] + loads[c]
            if new > LIMIT - margin:
                continue
            load[c], where[order[n]] = new, c
            if go(n + 1):
                return True
            load[c] -= loads[c]
        return False

    return where if go(0) else None


def check_placement(items, where, cpus):
    """Problems with a given placement (empty list: it keeps every guarantee)."""
    problems, load = [], [Fraction(0)] * len(cpus)
    for (loads, allowed), c in zip(items, where):
        if c not in allowed or loads[c] is None:
            problems.append(f"reservation placed on pCPU {c}, outside {allowed} or within "
                            f"its blackout there")
            continue
        load[c] += loads[c]
    for c, l in enumerate(load):
        if l > LIMIT:
            problems.append(f"pCPU {c} (capacity {cpus[c][1]}) holds {float(l):.4f} > {float(LIMIT)}")
    return problems


# The engine rounds densities up and rooms down (by < 2^-20 each): a set this
# close to the limit may go either way.
TOLERANCE = Fraction(1, 10000)


def expected_admissions(sc, decided=None):
    """For each reservation in scenario order: 'admit', 'capacity_fit', 'bandwidth',
    'either' (within TOLERANCE of the limit: any decision) or 'refused' (refused
    for either reason: it is within TOLERANCE of the limit alone). `decided` maps a vCPU name to
    what the engine did, so that later expectations follow its actual choices
    in ambiguous cases."""
    cpus, admitted, out = host_cpus(sc), [], {}
    for spec in sc["vcpus"]:
        r = spec.get("reservation")
        if not r:
            continue
        n = spec.get("count", 1)
        names = [spec["name"]] if n == 1 else [f"{spec['name']}{i}" for i in range(n)]
        for name in names:
            it = item(sc, r, spec, cpus)
            if not fits_alone(*it):
                out[name] = "capacity_fit"
                continue
            if placement(admitted + [it], cpus, TOLERANCE) is not None:
                out[name] = "admit"
            elif placement(admitted + [it], cpus) is None:
                out[name] = "bandwidth"
            else:
                out[name] = "either"
            if not fits_alone(*it, TOLERANCE):
                # At the limit alone: the engine's rounding may call it a misfit.
                out[name] = "either" if out[name] == "admit" else \
                    "refused" if out[name] == "bandwidth" else "either"
            took = decided.get(name) == "admit" if decided and out[name] == "either" else \
                out[name] == "admit"
            if took:
                admitted.append(it)
    return out
