#!/usr/bin/env bash
# Scheduling engine and simulator figures for the README:
#  - ns per scheduling decision at 8/64/1024 entities x 4/16/64 pCPUs
#  - the clamp fast path: no clamps / clamps set / clamp support compiled out
#  - simulator speed: 256 vCPUs on 64 pCPUs at a 1 ms tick
set -euo pipefail
BUILD=${BUILD:-build}
CAPVISOR=${CAPVISOR:-$BUILD/capvisor}
CC=${CC:-gcc}
bin=$BUILD/bench/bench_sched
[[ -x $bin ]] || { echo "bench_sched.sh: $bin not built (make bench-build)"; exit 1; }

"$bin" decisions
echo
# The compiled-out variant: the engine sources again with -DSCHED_NO_UCLAMP.
nouc=$BUILD/bench/bench_sched_nouclamp
$CC -std=gnu11 -D_GNU_SOURCE -O2 -g -I. -DSCHED_NO_UCLAMP bench/bench_sched.c sched/*.c -o "$nouc"
echo "clamp fast path, 64 entities on 16 pCPUs (3 interleaved runs each):"
for i in 1 2 3; do "$bin" clamps; "$nouc" clamps; done | sort | awk '
	{ key = $0; sub(/:.*/, "", key); v = $(NF - 3); vals[key] = vals[key] " " v }
	END { for (k in vals) printf "  %-28s%s ns per decision\n", k ":", vals[k] }'
echo

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/sim256.json" <<'JSON'
{
  "duration_ms": 20000, "tick_us": 1000, "seed": 3,
  "host": {"clusters": [{"name": "big", "cpus": 32, "capacity": 1024},
                        {"name": "little", "cpus": 32, "capacity": 512}]},
  "vcpus": [
    {"name": "busy", "count": 128, "work": {"type": "busy"}},
    {"name": "rand", "count": 96, "work": {"type": "random", "run_mean_us": 2000, "sleep_mean_us": 3000}},
    {"name": "per", "count": 32, "work": {"type": "periodic", "run_us": 1000, "period_us": 10000}}
  ]
}
JSON
sed 's/"count": 96, "work": {"type": "random"[^}]*}/"count": 96, "work": {"type": "busy"}/' \
	"$tmp/sim256.json" >"$tmp/sim256busy.json"
for sc in sim256 sim256busy; do
	# Wall and CPU time: the bench host's 2 cores are shared, CPU time is steadier.
	TIMEFORMAT='%R %U %S'
	t=$( { time "$CAPVISOR" sim "$tmp/$sc.json" --out "$tmp/out.json" >/dev/null; } 2>&1 )
	awk -v t="$t" -v sc=$sc 'BEGIN { split(t, f, " "); cpu = f[2] + f[3];
		printf "simulator, 256 vCPUs on 64 pCPUs, 1 ms tick (%s): %.0fx real time by wall clock, %.0fx by CPU time (20 s in %.2f s wall, %.2f s CPU)\n",
			(sc == "sim256" ? "busy+random+periodic" : "all busy"), 20 / f[1], 20 / cpu, f[1], cpu }'
done
