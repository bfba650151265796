#!/usr/bin/env bash
# Scheduling engine and simulator figures for the README:
#  - ns per scheduling decision at 8/64/1024 entities x 4/16/64 pCPUs
#  - the same at 1024 entities with and without groups (and the tick)
#  - the clamp fast path: no clamps / clamps set / clamp support compiled out
#  - admission cost of 1024 deadline reservations on 64 pCPUs
#  - simulator speed: 256 vCPUs on 64 pCPUs at a 1 ms tick
set -euo pipefail
BUILD=${BUILD:-build}
CAPVISOR=${CAPVISOR:-$BUILD/capvisor}
CC=${CC:-gcc}
bin=$BUILD/bench/bench_sched
[[ -x $bin ]] || { echo "bench_sched.sh: $bin not built (make bench-build)"; exit 1; }

"$bin" decisions
echo
"$bin" groups
echo
# Deadline admission: 1024 reservations on 64 pCPUs (bench/bench_dl_admit.c).
"$BUILD/bench/bench_dl_admit"
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
# The simulator's speed on a host whose cores go through phases of about
# half speed (see bench/host_speed.c): ROUNDS rounds of host probe, both
# scenarios, host probe; each figure is given over all rounds and over the
# rounds whose two probes were both within 10% of the fastest probe of the
# run (the host at full speed throughout the round).
ROUNDS=${ROUNDS:-9}
probe=$BUILD/bench/host_speed
[[ -x $probe ]] || { echo "bench_sched.sh: $probe not built (make bench-build)"; exit 1; }
wall() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$s $e" | awk '{ printf "%.4f", $2 - $1 }'; }
for r in $(seq "$ROUNDS"); do
	p1=$("$probe" | cut -d' ' -f1)
	m=$(wall "$CAPVISOR" sim "$tmp/sim256.json" --out "$tmp/out.json")
	b=$(wall "$CAPVISOR" sim "$tmp/sim256busy.json" --out "$tmp/out.json")
	p2=$("$probe" | cut -d' ' -f1)
	echo "$r $p1 $p2 $m $b"
done >"$tmp/rounds"
awk -v sim_s=20 '
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ n++; p1[n] = $2; p2[n] = $3; t[1, n] = $4; t[2, n] = $5
	  pmin = (n == 1 || $2 < pmin) ? $2 : pmin; pmin = $3 < pmin ? $3 : pmin
	  pmax = (n == 1 || $2 > pmax) ? $2 : pmax; pmax = $3 > pmax ? $3 : pmax }
	END {
		name[1] = "busy+random+periodic"; name[2] = "all busy"
		printf "simulator, 256 vCPUs on 64 pCPUs, 1 ms tick, 20 s simulated, %d rounds; host probe %.3f-%.3f s (slowest/fastest %.2fx)\n", n, pmin, pmax, pmax / pmin
		for (k = 1; k <= 2; k++) {
			delete all; delete full; na = nf = 0; best = 0; worst = 1e9
			for (i = 1; i <= n; i++) {
				x = sim_s / t[k, i]; all[++na] = x
				best = x > best ? x : best; worst = x < worst ? x : worst
				if (p1[i] <= pmin * 1.1 && p2[i] <= pmin * 1.1) full[++nf] = x
			}
			printf "  %-22s median %.0fx real time (best %.0fx, worst %.0fx)", name[k] ":", median(all, na), best, worst
			if (nf) printf "; host at full speed (%d rounds): median %.0fx", nf, median(full, nf)
			printf "\n"
		}
	}' "$tmp/rounds"
