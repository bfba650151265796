# SPDX-License-Identifier: MIT
"""Capped fair scenarios and their check against the oracle (tests/lib/fairshare.py).

A cap is a quota of run *time* per period (cgroup cpu.max); the oracle
bounds *work*. The two agree where the capacity a capped vCPU runs at is
known: on a host whose pCPUs all have one capacity, or with every vCPU
pinned to a cluster. The generator builds only such scenarios.
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fairshare import ideal_rates  # noqa: E402
from gencheck import ABS_TOL, REL_TOL, check_total  # noqa: E402

SLICE_US = 3000			# the engine's slice: how long a vCPU may run at once


def log_uniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def cluster_of(sc, v):
    clusters = sc["host"]["clusters"]
    if "cluster" in v:
        return next(c for c in clusters if c["name"] == v["cluster"])
    return clusters[0]	# one capacity for all: any cluster says it


def make_scenario(seed, index, duration_ms=5000):
    """Scenario `index` of the corpus of `seed`, and a description."""
    rng = random.Random(seed * 1000003 + index)
    nclusters = rng.randint(1, 3)
    pinned = nclusters > 1 and rng.random() < 0.6
    same = rng.choice([1024, rng.randint(128, 1024)])
    one_each = rng.random() < 0.5	# one pCPU per set of pCPUs the vCPUs compete on
    if one_each and not pinned:
        nclusters = 1
    clusters = []
    for i in range(nclusters):
        cap = rng.choice([1024, rng.randint(128, 1024)]) if pinned else same
        clusters.append({"name": f"c{i}", "cpus": 1 if one_each else rng.randint(1, 6),
                         "capacity": cap, "levels": [cap]})
    n = log_uniform_int(rng, 1, 48)
    vcpus = []
    for i in range(n):
        v = {"name": f"v{i}", "weight": log_uniform_int(rng, 15, 88761),
             "work": {"type": "busy"}}
        if pinned:
            v["cluster"] = rng.choice(clusters)["name"]
        if rng.random() < (0.15 if one_each else 0.4):
            period = rng.randint(5, 100) * 1000
            quota = max(1000, int(period * rng.uniform(0.05, 1.0)))
            v["cap"] = {"quota_us": quota, "period_us": period}
        vcpus.append(v)
    sc = {"duration_ms": duration_ms, "tick_us": 1000, "seed": rng.randint(1, 1 << 30),
          "host": {"clusters": clusters}, "vcpus": vcpus}
    ncapped = sum("cap" in v for v in vcpus)
    desc = (f"{sum(c['cpus'] for c in clusters)} pCPUs in {nclusters} clusters "
            f"{[c['capacity'] for c in clusters]}, {n} vCPUs ({ncapped} capped)"
            f"{', pinned' if pinned else ''}")
    return sc, desc


def oracle_entities(sc):
    names = [c["name"] for c in sc["host"]["clusters"]]
    ents = []
    for v in sc["vcpus"]:
        e = {"weight": v["weight"],
             "allowed": {names.index(v["cluster"])} if "cluster" in v else None}
        if "cap" in v:
            frac = v["cap"]["quota_us"] / v["cap"]["period_us"]
            e["cap"] = frac * cluster_of(sc, v)["capacity"] / 1024
        ents.append(e)
    return ents


def quota_limit_us(v, duration_us):
    """Most run time the cap allows over the run (periods from time 0)."""
    q, p = v["cap"]["quota_us"], v["cap"]["period_us"]
    return (duration_us // p) * q + min(q, duration_us % p)


def exact_case(sc):
    """Is the fluid ideal what quota-per-period caps give? Where every vCPU
    competes on a single pCPU with at most one capped vCPU there: the
    capped one's share is then the same at every instant, so it runs its
    quota at that share (or never runs out) and the others split the rest
    by weight, period by period. With two capped vCPUs on a pCPU, one's
    throttling raises the other's share for a while and it may run out of
    quota where its average rate would not: the ideal is an average the
    periods do not follow, and only the quotas and the total are checked.
    The same where a capped vCPU's share is just below its cap: it runs in
    slices, so in some periods it wants a slice more than its average and
    runs out of quota; its cap must bind (share >= cap) or leave a slice to
    spare, and where it binds, running at its share it must be done with
    its quota a slice before the period ends, or in a period where the
    others take a slice at the wrong time it cannot use all of it.
    Elsewhere (several pCPUs) the ideal needs the balance to pack the
    capped vCPUs' holes, which it does only approximately (docs/sched/caps.md,
    "Caps"): checked by the opt-in corpus, make test-caps-corpus."""
    clusters = sc["host"]["clusters"]
    pinned = all("cluster" in v for v in sc["vcpus"])
    if pinned and not all(c["cpus"] == 1 for c in clusters):
        return False
    if not pinned and sum(c["cpus"] for c in clusters) != 1:
        return False
    for c in clusters:
        mates = [v for v in sc["vcpus"] if not pinned or v["cluster"] == c["name"]]
        capped = [v for v in mates if "cap" in v]
        if len(capped) > 1:
            return False
        for v in capped:
            q, p = v["cap"]["quota_us"], v["cap"]["period_us"]
            share = v["weight"] / sum(m["weight"] for m in mates)
            if q / p > share and share * p > q - SLICE_US:
                return False	# unbound, but without a slice to spare
            if q / p <= share and q > share * (p - SLICE_US):
                return False	# bound, but its quota not done a slice before the end
    return True


def check_result(sc, res, per_vcpu=None):
    """(worst error as a fraction of the bound, list of failures). Always
    checks the quotas; the total work and each vCPU's work against the
    ideal where per_vcpu (default: exact_case(); True for all: the opt-in
    corpus)."""
    clusters = [(c["cpus"], c["capacity"]) for c in sc["host"]["clusters"]]
    got = {v["name"]: v for v in res["vcpus"]}
    dur_us = sc["duration_ms"] * 1000
    ideal = ideal_rates(clusters, oracle_entities(sc))
    if per_vcpu is None:
        per_vcpu = exact_case(sc)
    worst, fails = 0.0, check_total(sc["vcpus"], got, sum(ideal), dur_us) if per_vcpu else []
    for v, rate in zip(sc["vcpus"], ideal):
        r = got[v["name"]]
        want = rate * dur_us
        bound = max(REL_TOL * want, ABS_TOL * dur_us)
        err = abs(r["work_us"] - want) if per_vcpu else 0.0
        worst = max(worst, err / bound)
        what = (f"{v['name']} (weight {v['weight']}"
                f"{', cap ' + str(v['cap']) if 'cap' in v else ''}"
                f"{', cluster ' + v['cluster'] if 'cluster' in v else ''})")
        if err > bound:
            fails.append(f"{what}: work {r['work_us']} us, ideal {want:.0f} us, "
                         f"bound {bound:.0f} us")
        if "cap" in v and r["cpu_time_us"] > quota_limit_us(v, dur_us):
            fails.append(f"{what}: cpu time {r['cpu_time_us']} us above its quota's "
                         f"{quota_limit_us(v, dur_us)} us")
    return worst, fails
