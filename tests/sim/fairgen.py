# SPDX-License-Identifier: MIT
"""Random fair-share scenarios and their check against the oracle (tests/lib/fairshare.py).

Shared by the property test (test_fair_property) and the opt-in long run:
one scenario per (seed, index), so a failure is reproducible from the
printed seed, and the failing scenario is also written to a file.
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fairshare import ideal_rates  # noqa: E402

DURATION_MS = 10000
REL_TOL = 0.02			# 2% of the ideal ...
ABS_TOL_US = 0.005 * DURATION_MS * 1000	# ... or 0.5% of one pCPU over the run
SLEEPER_SLACK = 0.10		# sleepers: random demand, 10% below what they are owed
SLICE_US = 3000			# the engine's slice: the wakeup latency a sleeper may see


def log_uniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def make_host(rng):
    nclusters = rng.randint(1, 4)
    ncpus = log_uniform_int(rng, max(1, nclusters), 64)
    counts = [1] * nclusters
    for _ in range(ncpus - nclusters):
        counts[rng.randrange(nclusters)] += 1
    caps = [rng.choice([1024, rng.randint(128, 1024)]) for _ in range(nclusters)]
    # One level, the top: the ideal is defined there, and a sleeper's
    # random bursts (work) would take longer at the lower levels schedutil
    # picks for a partly idle cluster, which is not a scheduling question.
    return [{"name": f"c{i}", "cpus": counts[i], "capacity": caps[i], "levels": [caps[i]]}
            for i in range(nclusters)]


def make_work(rng, sleepers):
    if not sleepers or rng.random() < 0.6:
        return {"type": "busy"}
    if rng.random() < 0.5:
        period = rng.randint(5000, 20000)
        return {"type": "periodic", "run_us": rng.randint(100, period // 5), "period_us": period}
    return {"type": "random", "run_mean_us": rng.randint(200, 2000),
            "sleep_mean_us": rng.randint(2000, 20000)}


def make_scenario(seed, index, sleepers_allowed=True):
    """Scenario number `index` of the corpus of `seed`, and a description;
    without sleepers_allowed, the same scenario with every vCPU busy."""
    rng = random.Random(seed * 1000003 + index)
    clusters = make_host(rng)
    n = log_uniform_int(rng, 1, 512)
    pinned = len(clusters) > 1 and rng.random() < 0.4
    sleepers = rng.random() < 0.35
    drawn = sleepers
    sleepers = sleepers and sleepers_allowed
    vcpus = []
    for i in range(n):
        v = {"name": f"v{i}", "weight": log_uniform_int(rng, 15, 88761),
             "work": make_work(rng, drawn)}
        if not sleepers:
            v["work"] = {"type": "busy"}
        if pinned:
            v["cluster"] = rng.choice(clusters)["name"]
        vcpus.append(v)
    sc = {"duration_ms": DURATION_MS, "tick_us": 1000, "seed": rng.randint(1, 1 << 30),
          "host": {"clusters": clusters}, "vcpus": vcpus}
    desc = (f"{sum(c['cpus'] for c in clusters)} pCPUs in {len(clusters)} clusters "
            f"{[c['capacity'] for c in clusters]}, {n} vCPUs"
            f"{', pinned' if pinned else ''}{', with sleepers' if sleepers else ''}")
    return sc, desc


def sleeper_floor(work, fair, slowest):
    """Work per second a sleeper is owed, in units of one 1024 pCPU: while
    runnable it progresses at least at `fair`, its share were it always
    runnable (at most the slowest pCPU it may use), and each wakeup may
    wait up to a slice. A periodic job then fits its period or the vCPU
    is backlogged at `fair`; a random burst's cycle is run / rate + sleep
    + the wait."""
    rate = min(fair, slowest)
    if work["type"] == "periodic":
        return min(work["run_us"] / work["period_us"], rate)
    run, sleep = work["run_mean_us"], work["sleep_mean_us"]
    return run / (run / rate + sleep + SLICE_US) if rate > 0 else 0.0


def oracle_entities(sc, fixed=None):
    """Entities for the oracle; sleepers capped at `fixed[name]` (a rate), or as busy ones."""
    names = [c["name"] for c in sc["host"]["clusters"]]
    ents = []
    for v in sc["vcpus"]:
        allowed = {names.index(v["cluster"])} if "cluster" in v else None
        e = {"weight": v["weight"], "allowed": allowed}
        if fixed and v["work"]["type"] != "busy":
            e["cap"] = fixed[v["name"]]
        ents.append(e)
    return ents


def slowest_allowed(sc, v):
    clusters = sc["host"]["clusters"]
    return min(c["capacity"] for c in clusters if v.get("cluster", c["name"]) == c["name"]) / 1024


def check_result(sc, res):
    """(worst error as a fraction of the bound, list of failures, migrations per entity-second)."""
    clusters = [(c["cpus"], c["capacity"]) for c in sc["host"]["clusters"]]
    got = {v["name"]: v for v in res["vcpus"]}
    secs = sc["duration_ms"] / 1000
    fixed = {v["name"]: got[v["name"]]["work_us"] / (secs * 1e6)
             for v in sc["vcpus"] if v["work"]["type"] != "busy"}
    busy_ideal = ideal_rates(clusters, oracle_entities(sc, fixed))
    fair_ideal = ideal_rates(clusters, oracle_entities(sc)) if fixed else busy_ideal
    worst, fails, migr = 0.0, [], 0
    for v, rb, rf in zip(sc["vcpus"], busy_ideal, fair_ideal):
        r = got[v["name"]]
        migr += r["migrations"]
        if v["work"]["type"] == "busy":
            want = rb * secs * 1e6
            bound = max(REL_TOL * want, ABS_TOL_US)
            err = abs(r["work_us"] - want)
        else:
            floor = sleeper_floor(v["work"], rf, slowest_allowed(sc, v))
            want = floor * secs * 1e6 * (1 - SLEEPER_SLACK)
            bound = ABS_TOL_US
            err = max(0.0, want - r["work_us"])
        worst = max(worst, err / bound)
        if err > bound:
            fails.append(f"{v['name']} ({v['work']['type']}, weight {v['weight']}"
                         f"{', cluster ' + v['cluster'] if 'cluster' in v else ''}): "
                         f"work {r['work_us']} us, ideal {want:.0f} us, bound {bound:.0f} us")
    return worst, fails, migr / (len(sc["vcpus"]) * secs)
