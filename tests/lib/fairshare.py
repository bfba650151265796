# SPDX-License-Identifier: MIT
"""The ideal fair shares of busy entities: an oracle for the scheduler tests.

Independent of the engine (python3 stdlib only, shares no code with sched/):
the weighted max-min fair allocation of *work* (time x capacity / 1024 at
each pCPU's top level), as docs/sched.md defines it.

- Every entity gets a rate lambda x weight, except that no entity runs on
  two pCPUs at once: the entities of any set of k can never get more than
  the k fastest pCPUs they may use. On uniform pCPUs (each a capacity) this
  is the polymatroid {r : sum of the k largest r <= sum of the k largest
  capacities, for every k}, so progressive filling freezes, at each step,
  the largest prefix (by rate) that saturates its pCPUs.
- Affinity: pCPUs come in clusters; an entity may use the clusters it is
  allowed. The oracle solves each connected set of clusters (clusters linked
  by an entity allowed on both) separately and needs every entity of such a
  set to be allowed on all of its clusters (e.g. every entity pinned to one
  cluster, or none pinned); anything else raises ValueError rather than
  giving a wrong answer.
- Groups: a group's rate is lambda x its weight, divided among its members
  by their weights; what a member cannot use (the one-pCPU limit, its cap)
  goes to the other members, what the group cannot use to other groups.
  Groups nest (a group's "parent" is another group's key): a member of a
  group is an entity or a group, and the rule holds at every level: a
  group's members share its rate by weight among those still growing, so
  what one member cannot use goes to its siblings first.
- Caps: an entity's or a group's rate never exceeds its cap (work per
  second, in units of one 1024 pCPU). A fixed demand (a sleeper's) is a cap.

Rates are in units of one 1024-capacity pCPU (1.0 = 1024 work ns per ns).
"""

EPS = 1e-12


def _feasible(rates, caps_desc, cap_prefix):
    """Do the rates fit on pCPUs with these capacities (sorted, descending)?"""
    acc = 0.0
    for k, r in enumerate(sorted(rates, reverse=True)):
        acc += r
        limit = cap_prefix[min(k, len(caps_desc) - 1)]
        if acc > limit * (1 + 1e-12) + EPS:
            return False
    return True


def _tight_threshold(rates, caps_desc, cap_prefix):
    """The smallest rate in the largest prefix (by rate) that saturates its pCPUs, or None."""
    order = sorted(rates, reverse=True)
    acc, best = 0.0, None
    for k, r in enumerate(order):
        acc += r
        limit = cap_prefix[min(k, len(caps_desc) - 1)]
        if acc >= limit * (1 - 1e-9) - 1e-9:
            best = r
    return best


def _fill(caps, ents, groups):
    """Progressive filling on one set of uniform pCPUs. ents: list of dicts
    with weight, cap (or None), group (key into groups, or None)."""
    caps_desc = sorted((c / 1024.0 for c in caps), reverse=True)
    cap_prefix = []
    acc = 0.0
    for c in caps_desc:
        acc += c
        cap_prefix.append(acc)
    n = len(ents)
    rate = [0.0] * n
    frozen = [False] * n
    while not all(frozen):
        nr_frozen = sum(frozen)
        speed = _speeds(ents, groups, frozen)
        t_cap, capped = _cap_step(ents, groups, rate, speed, frozen)
        # A cap reached before any pCPU saturates needs no search: most
        # steps are a sleeper's demand, one check each.
        if t_cap < float("inf") and _feasible([r + s * t_cap for r, s in zip(rate, speed)],
                                              caps_desc, cap_prefix):
            t = t_cap
        else:
            t = min(_max_step(rate, speed, caps_desc, cap_prefix), t_cap)
        rate = [r + s * t for r, s in zip(rate, speed)]
        if t_cap <= t * (1 + 1e-12):
            for i in capped:
                frozen[i] = True
        thr = _tight_threshold(rate, caps_desc, cap_prefix)
        if thr is not None:
            for i in range(n):
                if not frozen[i] and rate[i] >= thr * (1 - 1e-9) - 1e-12:
                    frozen[i] = True
        if t == 0 and sum(frozen) == nr_frozen:
            raise RuntimeError("oracle: a filling step froze nothing (numerical tolerance)")
    return rate


def _parent(groups, key):
    return groups[key].get("parent")


def _ancestors(groups, key):
    """key and the groups above it, innermost first."""
    out = []
    while key is not None:
        if key in out:
            raise ValueError("groups form a cycle")
        out.append(key)
        key = _parent(groups, key)
    return out


def _speeds(ents, groups, frozen):
    """d rate / d lambda of each unfrozen entity: at every level, its
    group's weight split by the weights of the members still growing."""
    active_w, active_groups = {}, set()
    for e, fz in zip(ents, frozen):
        if fz:
            continue
        key, w = e["group"], e["weight"]
        while key is not None:
            active_w[key] = active_w.get(key, 0) + w
            if key in active_groups:
                break
            active_groups.add(key)
            key, w = _parent(groups, key), groups[key]["weight"]
    speed = []
    for i, e in enumerate(ents):
        if frozen[i]:
            speed.append(0.0)
            continue
        v = float(e["weight"])
        for key in _ancestors(groups, e["group"]):
            v *= groups[key]["weight"] / active_w[key]
        speed.append(v)
    return speed


def _max_step(rate, speed, caps_desc, cap_prefix):
    """Largest t such that rate + speed x t still fits (bisection)."""
    total = sum(speed)
    hi = (cap_prefix[-1] - sum(rate)) / total + 1e-9
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _feasible([r + s * mid for r, s in zip(rate, speed)], caps_desc, cap_prefix):
            lo = mid
        else:
            hi = mid
        # relative to t itself: with heavy weights t is tiny, and a bound
        # of 1e-15 absolute left the rates short of saturation by more
        # than _tight_threshold's tolerance, so that nothing ever froze
        if hi - lo <= 1e-15 * hi:
            break
    return lo


def _cap_step(ents, groups, rate, speed, frozen):
    """First time an entity or group cap is reached, and who freezes then."""
    best, who = float("inf"), []
    for i, e in enumerate(ents):
        if frozen[i] or e.get("cap") is None:
            continue
        t = (e["cap"] - rate[i]) / speed[i]
        if t < best * (1 - 1e-12):
            best, who = t, [i]
        elif t <= best * (1 + 1e-12):
            who.append(i)
    for key, g in groups.items():
        if g.get("cap") is None:
            continue
        below = [i for i, e in enumerate(ents) if key in _ancestors(groups, e["group"])]
        members = [i for i in below if not frozen[i]]
        gspeed = sum(speed[i] for i in members)
        if not members or gspeed <= 0:
            continue
        used = sum(rate[i] for i in below)
        t = (g["cap"] - used) / gspeed
        if t < best * (1 - 1e-12):
            best, who = t, members
        elif t <= best * (1 + 1e-12):
            who = who + members
    return max(best, 0.0), who


def _components(clusters, ents):
    """Sets of clusters linked by the entities' affinities (union-find)."""
    parent = list(range(len(clusters)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for e in ents:
        allowed = sorted(e["allowed"])
        for c in allowed[1:]:
            parent[find(c)] = find(allowed[0])
    comps = {}
    for c in range(len(clusters)):
        comps.setdefault(find(c), set()).add(c)
    return list(comps.values())


def ideal_rates(clusters, entities, groups=None):
    """The max-min fair rate of every entity.

    clusters: list of (nr_cpus, capacity). entities: list of dicts with
    weight (> 0), optional allowed (set of cluster indices; default all),
    cap (rate bound), group (a key of groups). groups: {key: {weight, cap,
    parent}} (parent: another key, or None for the root). A group's members
    must all be in one connected set of clusters.
    Returns a list of rates (units of one 1024 pCPU)."""
    groups = groups or {}
    ents = []
    for e in entities:
        if e["weight"] <= 0:
            raise ValueError("entity weight must be positive")
        allowed = set(e.get("allowed") or range(len(clusters)))
        ents.append({"weight": e["weight"], "cap": e.get("cap"), "group": e.get("group"),
                     "allowed": allowed})
    rates = [0.0] * len(ents)
    for comp in _components(clusters, ents):
        idx = [i for i, e in enumerate(ents) if e["allowed"] & comp]
        for i in idx:
            if ents[i]["allowed"] != comp:
                raise ValueError("affinities that overlap only partly are not supported")
        gkeys = {k for i in idx for k in _ancestors(groups, ents[i]["group"])}
        for i, e in enumerate(ents):
            if i not in idx and set(_ancestors(groups, e["group"])) & gkeys:
                raise ValueError("a group spans two unconnected sets of clusters")
        caps = [cap for c in sorted(comp) for cap in [clusters[c][1]] * clusters[c][0]]
        sub = _fill(caps, [ents[i] for i in idx], {k: groups[k] for k in gkeys})
        for i, r in zip(idx, sub):
            rates[i] = r
    return rates
