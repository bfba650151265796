# SPDX-License-Identifier: MIT
"""Scenarios with groups (nested, weighted, capped) and their check against
the oracle (tests/lib/fairshare.py).

The engine solves the hierarchical ideal exactly where every pCPU has one
capacity and no vCPU is pinned (docs/sched/groups.md "Groups and group caps");
there, too, a cap's quota of time is a known amount of work. The
generator builds only such hosts: 1..16 pCPUs of one capacity 128..1024.
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fairshare import ideal_rates  # noqa: E402
from gencheck import ABS_TOL, REL_TOL, check_total  # noqa: E402

MAX_DEPTH = 3			# the engine's SCHED_GROUP_DEPTH_MAX
PERIOD_MIN_MS = 20
WMIN, WMAX = 15, 88761		# weights: Linux's nice range


def log_uniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def random_cap(rng, ncpus, most):
    """quota/period with a rate of at most `most` pCPUs (and the engine's
    limits). Periods of 20..100 ms: within a few slices (3 ms) of the
    period a capped vCPU may find its pCPU taken by a slice that runs to
    its end (RUN_TO_PARITY) and lose quota the ideal would give it."""
    period = rng.randint(PERIOD_MIN_MS, 100) * 1000
    quota = max(1000, min(int(period * rng.uniform(0.05, most)), period * ncpus))
    return {"quota_us": quota, "period_us": period}


def make_groups(rng, ncpus):
    groups, depth = [], {}
    for i in range(rng.randint(1, 6)):
        g = {"name": f"g{i}", "weight": log_uniform_int(rng, WMIN, WMAX)}
        parents = [p["name"] for p in groups if depth[p["name"]] < MAX_DEPTH]
        if parents and rng.random() < 0.4:
            g["parent"] = rng.choice(parents)
        depth[g["name"]] = depth.get(g.get("parent"), 0) + 1
        if rng.random() < 0.3:
            g["cap"] = random_cap(rng, ncpus, min(ncpus, 4))
        groups.append(g)
    return groups


def make_scenario(seed, index, entity_caps=False, duration_ms=10000):
    """Scenario `index` of the corpus of `seed`, and a description. With
    entity_caps, some vCPUs have their own cap too (several capped vCPUs
    on one pCPU: what caps give is not the fluid ideal there, see capgen.py
    exact_case(); make test-groups-corpus)."""
    rng = random.Random(seed * 1000003 + index)
    cap = rng.choice([1024, rng.randint(128, 1024)])
    ncpus = rng.choice([1, 2, rng.randint(1, 16)])
    groups = make_groups(rng, ncpus)
    names = [g["name"] for g in groups]
    vcpus = []
    for i in range(log_uniform_int(rng, 1, 64)):
        v = {"name": f"v{i}", "weight": log_uniform_int(rng, WMIN, WMAX),
             "work": {"type": "busy"}}
        if rng.random() < 0.8:
            v["group"] = rng.choice(names)
        if rng.random() < 0.1 and entity_caps:
            v["cap"] = random_cap(rng, 1, 1.0)
            v["cap"]["quota_us"] = min(v["cap"]["quota_us"], v["cap"]["period_us"])
        vcpus.append(v)
    sc = {"duration_ms": duration_ms, "tick_us": 1000, "seed": rng.randint(1, 1 << 30),
          "host": {"clusters": [{"name": "cpu", "cpus": ncpus, "capacity": cap,
                                 "levels": [cap]}]},
          "groups": groups, "vcpus": vcpus}
    desc = (f"{ncpus} pCPUs of {cap}, {len(groups)} groups "
            f"({sum('cap' in g for g in groups)} capped, "
            f"{sum('parent' in g for g in groups)} nested), {len(vcpus)} vCPUs")
    return sc, desc


def rate_cap(c, capacity):
    return c["quota_us"] / c["period_us"] * capacity / 1024


def oracle(sc):
    """Ideal rate of every vCPU, in scenario order."""
    capacity = sc["host"]["clusters"][0]["capacity"]
    ncpus = sum(c["cpus"] for c in sc["host"]["clusters"])
    groups = {}
    for g in sc.get("groups", []):
        groups[g["name"]] = {"weight": g["weight"], "parent": g.get("parent"),
                             "cap": rate_cap(g["cap"], capacity) if "cap" in g else None}
    ents = [{"weight": v["weight"], "group": v.get("group"),
             "cap": rate_cap(v["cap"], capacity) if "cap" in v else None}
            for v in sc["vcpus"]]
    return ideal_rates([(ncpus, capacity)], ents, groups)


def quota_limit_us(c, duration_us, par=1):
    """Most run time a cap allows over the run (periods from time 0) to
    `par` vCPUs running at once."""
    q, p = c["quota_us"], c["period_us"]
    return (duration_us // p) * q + min(q, (duration_us % p) * par)


def below(sc, gname):
    """The vCPUs in group gname or any group under it."""
    parent = {g["name"]: g.get("parent") for g in sc.get("groups", [])}

    def inside(key):
        while key is not None:
            if key == gname:
                return True
            key = parent[key]
        return False
    return [v for v in sc["vcpus"] if inside(v.get("group"))]


def expand(sc):
    """The scenario with one vcpus[] entry per vCPU (counts expanded as the
    simulator names them, the default weight filled in)."""
    out = dict(sc)
    out["vcpus"] = []
    for spec in sc["vcpus"]:
        n = spec.get("count", 1)
        for i in range(n):
            v = {k: val for k, val in spec.items() if k != "count"}
            v["name"] = spec["name"] if n == 1 else f"{spec['name']}{i}"
            v.setdefault("weight", 1024)
            out["vcpus"].append(v)
    return out


def exact_case(sc):
    """Is the engine held to the ideal here? On one pCPU, where the ideal
    is a matter of weights and caps only. On several it also needs the
    fluid balance to find placements that add up, which it does only
    approximately (docs/sched/groups.md, "Groups and group caps"): checked by
    the opt-in corpus, make test-groups-corpus."""
    return sum(c["cpus"] for c in sc["host"]["clusters"]) == 1


def check_result(sc, res, per_vcpu=True):
    """(worst error as a fraction of the bound, list of failures): every
    cap's quotas kept and the total work within the bound of the ideal's;
    with per_vcpu, every vCPU's and every group's work too (the worst
    error is theirs either way)."""
    sc = expand(sc)
    dur_us = sc["duration_ms"] * 1000
    ncpus = sum(c["cpus"] for c in sc["host"]["clusters"])
    got = {v["name"]: v for v in res["vcpus"]}
    ggot = {g["name"]: g for g in res["groups"]}
    ideal = dict(zip((v["name"] for v in sc["vcpus"]), oracle(sc)))
    worst, fails = 0.0, check_total(sc["vcpus"], got, sum(ideal.values()), dur_us)

    def against(what, work, rate):
        nonlocal worst
        want = rate * dur_us
        bound = max(REL_TOL * want, ABS_TOL * dur_us)
        worst = max(worst, abs(work - want) / bound)
        if abs(work - want) > bound and per_vcpu:
            fails.append(f"{what}: work {work} us, ideal {want:.0f} us, bound {bound:.0f} us")
    for v in sc["vcpus"]:
        against(f"{v['name']} (weight {v['weight']}, group {v.get('group')}"
                f"{', cap ' + str(v['cap']) if 'cap' in v else ''})",
                got[v["name"]]["work_us"], ideal[v["name"]])
        if "cap" in v and got[v["name"]]["cpu_time_us"] > quota_limit_us(v["cap"], dur_us):
            fails.append(f"{v['name']}: cpu time {got[v['name']]['cpu_time_us']} us above "
                         f"its quota's {quota_limit_us(v['cap'], dur_us)} us")
    for g in sc.get("groups", []):
        members = below(sc, g["name"])
        if members:
            against(f"group {g['name']} (weight {g['weight']}, {len(members)} vCPUs"
                    f"{', cap ' + str(g['cap']) if 'cap' in g else ''})",
                    ggot[g["name"]]["work_us"], sum(ideal[v["name"]] for v in members))
        par = min(len(members), ncpus)
        if "cap" in g and ggot[g["name"]]["cpu_time_us"] > quota_limit_us(g["cap"], dur_us, par):
            fails.append(f"group {g['name']}: cpu time {ggot[g['name']]['cpu_time_us']} us "
                         f"above its quota's {quota_limit_us(g['cap'], dur_us, par)} us")
    return worst, fails
