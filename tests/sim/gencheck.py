# SPDX-License-Identifier: MIT
"""What the capped and grouped scenario generators (capgen.py, groupgen.py)
check alike: the tolerance against the oracle's ideal, and the total work."""

REL_TOL = 0.02			# 2% of the ideal ...
ABS_TOL = 0.005			# ... or 0.5% of one pCPU over the run


def check_total(vcpus, got, rate, dur_us):
    """Work-conserving: together the vCPUs get what the oracle gives them,
    `rate` pCPUs' worth of work over dur_us."""
    want = rate * dur_us
    total = sum(got[v["name"]]["work_us"] for v in vcpus)
    bound = max(REL_TOL * want, ABS_TOL * dur_us)
    if abs(total - want) > bound:
        return [f"total work {total} us, ideal {want:.0f} us, bound {bound:.0f} us"]
    return []
