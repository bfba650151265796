#!/bin/busybox sh
# init of the L2 guest (a stock Debian Linux under capvisor): runs the
# workload named by capvisor_workload= on its command line and reports what
# Linux believes as JSON lines "CVJ {...}" on the console: sysfs (acpi_cppc,
# cpufreq, firmware nodes), /proc/stat, se.avg.util_avg of busy tasks from
# /proc/PID/sched, and the dmesg lines the checks read. A line with
# "k":"sample" asks whoever runs capvisor to sample it now (QMP query-vcpus).
# Output is kept small: every console byte is an exit to capvisor.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys

# Fork-free helpers (every fork is slow under nested emulation): each sets
# $v to one JSON value read from a file.
j() { echo "CVJ {$1}"; }
# A string from sysfs: kernel-made text; a quote or backslash would be a
# surprise and is replaced rather than escaped.
str() {
	v=
	read -r v 2>/dev/null <"$1"
	case "$v" in *[\"\\]*) v="?" ;; esac
	v="\"$v\""
}
num() {
	v=
	read -r v 2>/dev/null <"$1"
	case "$v" in '' | *[!0-9]*) v=null ;; esac
}
q() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\001-\037')"; }
cpus() { ls -d /sys/devices/system/cpu/cpu[0-9]* | sed 's/.*cpu//' | sort -n; }

report_cpu() {
	a=/sys/devices/system/cpu/cpu$1/acpi_cppc f=/sys/devices/system/cpu/cpu$1/cpufreq
	fw=$(readlink /sys/devices/system/cpu/cpu$1/firmware_node 2>/dev/null)
	line="\"k\":\"cpu\",\"tag\":\"$2\",\"cpu\":$1,\"firmware_node\":\"${fw##*/}\""
	for k in highest_perf nominal_perf lowest_nonlinear_perf lowest_perf guaranteed_perf \
		nominal_freq lowest_freq reference_perf; do
		num $a/$k
		line="$line,\"$k\":$v"
	done
	str $a/feedback_ctrs; line="$line,\"feedback_ctrs\":$v"
	# 6.12's amd-pstate: preferred-core ranking and the active mode's EPP.
	num $f/amd_pstate_prefcore_ranking; line="$line,\"prefcore_ranking\":$v"
	str $f/energy_performance_preference; line="$line,\"epp\":$v"
	num $f/scaling_min_freq; line="$line,\"scaling_min\":$v"
	str $f/scaling_driver; line="$line,\"driver\":$v"
	str $f/scaling_governor; line="$line,\"governor\":$v"
	num $f/cpuinfo_max_freq; line="$line,\"max_freq\":$v"
	num $f/cpuinfo_min_freq; line="$line,\"min_freq\":$v"
	num $f/scaling_cur_freq; line="$line,\"cur_freq\":$v"
	j "$line"
}

report_cpus() { for n in $(cpus); do report_cpu $n "$1"; done; }

report_stat() {
	grep '^cpu[0-9]' /proc/stat | while read -r c u n s i w irq sirq st rest; do
		j "\"k\":\"stat\",\"tag\":\"$1\",\"cpu\":${c#cpu},\"user\":$u,\"nice\":$n,\"system\":$s,\"idle\":$i,\"iowait\":$w,\"irq\":$irq,\"softirq\":$sirq,\"steal\":$st"
	done
}

report_misc() {
	cs=/sys/devices/system/clocksource/clocksource0
	fam=$(sed -n 's/^cpu family[^:]*: *//p' /proc/cpuinfo | head -n 1)
	mod=$(sed -n 's/^model[^:]*: *\([0-9]*\)$/\1/p' /proc/cpuinfo | head -n 1)
	j "\"k\":\"cpu_model\",\"vendor\":$(q "$(sed -n 's/^vendor_id[^:]*: *//p' /proc/cpuinfo | head -n 1)"),\"family\":${fam:-null},\"model\":${mod:-null}"
	str $cs/current_clocksource; line="\"k\":\"clocksource\",\"current\":$v"
	str $cs/available_clocksource; j "$line,\"available\":$v"
	p=/sys/devices/system/cpu/amd_pstate
	num /proc/sys/kernel/sched_itmt_enabled; line="\"k\":\"pstate\",\"itmt\":$v"
	str $p/status; line="$line,\"status\":$v"
	str $p/prefcore; j "$line,\"prefcore\":$v"
}

# Every line at warning level or worse, and the lines the checks name.
report_dmesg() {
	j "\"k\":\"dmesg_lines\",\"count\":$(dmesg | wc -l)"
	dmesg -r | grep -E '^<[0-4]>|Hypervisor detected|bare hardware|clocksource|kvm-clock|kvm-guest|PV spinlock|sched yield|wobbly|Estimated ratio|amd_pstate|amd-pstate|_OSC|CPPC|TSC|tsc:|MSR|ACPI (Error|Warning|BIOS)|rror|fail' |
		tr -d '\r' | sed 's/\\/\\\\/g; s/"/\\"/g; s/^/CVJ {"k":"dmesg","line":"/; s/$/"}/'
}

sample() { j "\"k\":\"sample\",\"phase\":\"$1\""; sleep 1; }

# A busy task on one CPU (hex mask), its pid on stdout.
spin() {
	taskset "$(printf '%x' $((1 << $1)))" sh -c 'while :; do :; done' >/dev/null 2>&1 &
	echo $!
}

util_of() { sed -n 's/^se\.avg\.util_avg *: *//p' /proc/$1/sched; }
# The task's run time so far (ns, /proc/PID/schedstat): the clock PELT counts
# its running by (without PARAVIRT_TIME_ACCOUNTING, as Debian builds it,
# time stolen while it ran counts too); and the uptime (s, 10 ms steps).
run_of() { read -r r rest < /proc/$1/schedstat; echo "$r"; }
uptime_of() { read -r t rest < /proc/uptime; echo "$t"; }
# /proc/cpuinfo's "cpu MHz": the TSC rate times the last tick's dAPERF/dMPERF.
mhz_of() {
	awk -v n="$1" '/^processor/ { p = $3 } /^cpu MHz/ && p == n { v = $4 }
		END { print (v == "" ? "null" : v) }' /proc/cpuinfo
}

# Busy on CPU $1 for $2 s: the guest's own invariant utilization and the
# frequency its governor asked for, with the feedback counters around it.
busy_report() {
	pid=$(spin $1)
	str /sys/devices/system/cpu/cpu$1/acpi_cppc/feedback_ctrs; before=$v
	sleep $2
	mhz=
	for i in 1 2 3 4 5; do mhz="$mhz${mhz:+,}$(mhz_of $1)"; sleep 0.2; done
	num /sys/devices/system/cpu/cpu$1/cpufreq/scaling_cur_freq; cur=$v
	str /sys/devices/system/cpu/cpu$1/acpi_cppc/feedback_ctrs; after=$v
	j "\"k\":\"util\",\"tag\":\"$3\",\"cpu\":$1,\"util_avg\":$(util_of $pid),\"cpu_mhz\":[$mhz],\"cur_freq\":$cur,\"fb_before\":$before,\"fb_after\":$after"
	sample "$3"
	kill $pid
}

set_governor() {
	for g in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
		echo "$1" >"$g" 2>/dev/null
	done
}

# Idle for 12 s but for a wakeup on CPU 0 every 100 ms that does nothing:
# schedutil only revisits a CPU's request when something runs there (cvload
# forks nothing, a shell loop would). Under nested emulation a guest CPU is
# not idle whenever it should be, so phase $1 is sampled eight times, a
# second apart, in the last 8 s ($1.1 to $1.8). With four samples in the
# last 4 s of 8, one clean-clone run of 2026-12-06 read the top request in
# all four of the first idle phase (its guest logged a 16 ms hrtimer
# interrupt then), where every other run read it lower.
idle_phase() {
	cvload tick 0 100000 12 &
	sleep 4
	for i in 1 2 3 4 5 6 7 8; do sample "$1.$i"; done
	wait
}

# Two vCPUs: idle, busy on each in turn, idle again.
wl_hetero() {
	report_misc
	report_cpus boot
	report_stat start
	set_governor schedutil
	idle_phase idle0
	for n in $(cpus); do
		busy_report $n 3 busy$n
	done
	idle_phase idle1
	report_stat end
	report_cpus end
	# Each CPU at its top (governor performance), a task busy half of
	# every 8 ms: its run queue idles, so PELT's util is its busy time
	# scaled by the frequency scale. Measured twice (half, halfb): a
	# stall of the emulated host inside one window skews it.
	set_governor performance
	for n in $(cpus); do
		duty_report $n 4000 8000 3 half$n
		duty_report $n 4000 8000 1 halfb$n
	done
	set_governor schedutil
}

# Every CPU busy at once (contention where vCPUs share a pCPU), each asking
# for its highest performance (governor performance).
wl_allbusy() {
	report_misc
	set_governor performance
	report_cpus start
	report_stat start
	pids=
	for n in $(cpus); do pids="$pids $(spin $n)"; done
	sleep 4
	report_stat end
	report_cpus end
	for p in $pids; do j "\"k\":\"util\",\"tag\":\"allbusy\",\"pid\":$p,\"util_avg\":$(util_of $p)"; done
	sample allbusy
	kill $pids
}

# The steady duty-cycled task of cvload on CPU $1: busy $2 us of every
# $3 us of wall time, for $4 s before the report. Its busy share does not
# depend on speed. Reports the guest's util_avg of it (DUTY_READINGS
# readings 0.1 s apart: PELT is linear, so their mean is its input's mean
# over those seconds, where one reading sees only the last ~50 ms, and
# under emulation the guest's time flows unevenly), the task's run time,
# the feedback counters and /proc/stat around the readings, and samples.
DUTY_READINGS=20
duty_report() {
	cvload duty $1 $2 $3 0 &
	dp=$!
	sleep $4
	c=/sys/devices/system/cpu/cpu$1
	str $c/acpi_cppc/feedback_ctrs; before=$v
	report_stat "$5-start"
	# The readings (forks of sed and awk) run on another CPU: on this one
	# they would take turns with the task they measure.
	other=$(cpus | grep -vx "$1" | head -n 1)
	[ -n "$other" ] && taskset -p -c "$other" $$ >/dev/null
	r0=$(run_of $dp) t0=$(uptime_of)
	u= mhz=
	for i in $(seq 1 $DUTY_READINGS); do
		u="$u${u:+,}$(util_of $dp)"
		[ $((i % 4)) -eq 0 ] && mhz="$mhz${mhz:+,}$(mhz_of $1)"
		sleep 0.1
	done
	r1=$(run_of $dp) t1=$(uptime_of)
	taskset -p -c "0-$(cpus | tail -n 1)" $$ >/dev/null
	str $c/acpi_cppc/feedback_ctrs; after=$v
	report_stat "$5-end"
	j "\"k\":\"duty\",\"tag\":\"$5\",\"cpu\":$1,\"busy_us\":$2,\"period_us\":$3,\"util_avg\":[$u],\"cpu_mhz\":[$mhz],\"fb_before\":$before,\"fb_after\":$after,\"run_ns\":[$r0,$r1],\"uptime_s\":[$t0,$t1]"
	sample "$5"
	kill $dp
	wait $dp 2>/dev/null
}

# seed 002 on the real guest: a task busy 75% of wall time on CPU $1 under
# schedutil. 1.25 x 0.75 > 1: with an honest frequency scale the governor
# keeps the CPU at its top level; scaled by 1024/1532 (the naive max ratio)
# it asks 0.63 of what it gets and sinks.
wl_seed002() {
	set_governor schedutil
	duty_report $1 15000 20000 5 seed$1
}

# Each CPU's run time and run delay so far (/proc/schedstat, ns: what ran
# on it, whatever task), one line per CPU.
report_schedstat() {
	grep '^cpu[0-9]' /proc/schedstat | while read -r c y l sc sg tw tl run delay rest; do
		j "\"k\":\"schedstat\",\"tag\":\"$1\",\"cpu\":${c#cpu},\"run_ns\":$run,\"delay_ns\":$delay"
	done
}

# How often the guest moved task $1 between CPUs so far.
migrations_of() { sed -n 's/^se\.nr_migrations *: *//p' /proc/$1/sched; }

# N busy tasks left to the guest's scheduler (no affinity): after 4 s (its
# balancing is slow under nested emulation: in a run sampled after 2 s a
# task moved from the little vCPU to a big one during the samples), each
# CPU's run time over 3 s in which the guest's init only sleeps
# (/proc/schedstat) and each task's migrations over them; then the CPU
# each runs on (/proc/PID/stat field 39) ten times over 2 s. The sampling
# loop is not quiet: whatever it wakes on a busy big vCPU gives that CPU a
# second runnable task, which the idle little vCPU may pull.
placement() {
	n=$1 tag=$2 pids=
	for i in $(seq $n); do
		cvload spin -1 0 &
		pids="$pids $!"
	done
	sleep 4
	m0=
	for p in $pids; do m0="$m0${m0:+,}$(migrations_of $p)"; done
	report_schedstat "$tag-start"
	sleep 3
	report_schedstat "$tag-end"
	m1=
	for p in $pids; do m1="$m1${m1:+,}$(migrations_of $p)"; done
	on=
	for i in 1 2 3 4 5 6 7 8 9 10; do
		for p in $pids; do
			read -r st </proc/$p/stat
			set -- $st
			on="$on${on:+,}${39}"
		done
		sleep 0.2
	done
	j "\"k\":\"placement\",\"tag\":\"$tag\",\"tasks\":$n,\"cpus\":[$on],\"migrations_before\":[$m0],\"migrations_after\":[$m1]"
	sample "$tag"
	kill $pids
	wait $pids 2>/dev/null
}

# The guest's view of the Generic Event Device: its /proc/interrupts line
# ("ACPI:Ged" once evged bound it; the count says how often it fired).
report_ged() {
	j "\"k\":\"ged\",\"tag\":\"$1\",\"line\":$(q "$(grep -i ged /proc/interrupts | tr -s ' ')")"
}

# A live host change, re-ranked by 6.12: one busy task placed, then over
# QMP (the "move" lines, run by whoever runs capvisor) vCPU 0 goes from big
# to little and vCPU 2 from little to big; capvisor notifies each processor
# (0x85) through the GED, 6.12's amd-pstate re-reads highest_perf and sets
# its ranking and ITMT priority. Then the same again: ranking, ITMT, where
# one busy task runs.
wl_rerank() {
	report_misc
	report_cpus boot
	report_ged boot
	set_governor schedutil
	sleep 4
	placement 1 before
	j "\"k\":\"move\",\"ctl\":\"set-vcpu-cluster vcpu=0 cluster=little\""
	j "\"k\":\"move\",\"ctl\":\"set-vcpu-cluster vcpu=2 cluster=big\""
	sleep 4
	report_ged moved
	report_misc
	report_cpus moved
	placement 1 after
}

# A joined VM moved by its host (docs/host.md, "CPPC"): over the host's QMP
# vCPU 0 goes from big to little; the VM reads the new cluster from its
# slot at vCPU 0's next run, sets its _CPC caps and notifies (GED, 0x85).
# A 6.1 guest re-reads acpi_cppc/highest_perf from the CPPC page each time.
# Then both busy on the one little pCPU: the steal the host relays.
wl_move() {
	report_misc
	report_cpus boot
	report_ged boot
	j "\"k\":\"move\",\"ctl\":\"set-vcpu-cluster vcpu=0 cluster=little\""
	sleep 4
	report_ged moved
	report_cpus moved
	# Both vCPUs now share little's one pCPU: busy, each waits for the
	# other, and the host's hold-outs reach the guest as steal.
	pids=
	for n in $(cpus); do pids="$pids $(spin $n)"; done
	report_stat start
	sleep 4
	report_stat end
	kill $pids
}

# 6.12's preferred cores: ranking and ITMT (report_misc, report_cpus), where
# one and then two busy tasks run, each CPU's util of a duty-cycled task.
wl_prefcore() {
	report_misc
	report_cpus boot
	set_governor schedutil
	sleep 8
	placement 1 one
	placement 2 two
	set_governor performance
	for n in $(cpus); do
		duty_report $n 4000 8000 3 half$n
		duty_report $n 4000 8000 1 halfb$n
	done
	report_cpus end
}

# Requests reaching the engine: idle, busy on CPU 0, idle, busy on CPU 1.
wl_requests() {
	report_misc
	report_cpus boot
	set_governor schedutil
	idle_phase idle0
	for n in $(cpus); do
		busy_report $n 3 busy$n
	done
	idle_phase idle1
	report_cpus end
}

wl=$(sed -n 's/.*capvisor_workload=\([^ ]*\).*/\1/p' /proc/cmdline)
j "\"k\":\"begin\",\"workload\":$(q "$wl"),\"cpus\":$(cpus | wc -l)"
case "$wl" in
hetero) wl_hetero ;;
allbusy) wl_allbusy ;;
hetero_duty) wl_hetero; wl_seed002 0 ;;
seed002) report_misc; report_cpus boot; wl_seed002 1 ;;
prefcore) wl_prefcore ;;
rerank) wl_rerank ;;
move) wl_move ;;
requests) wl_requests ;;
report) report_misc; report_cpus boot ;;
*) j "\"k\":\"error\",\"msg\":$(q "unknown workload '$wl'")" ;;
esac
report_dmesg
j "\"k\":\"end\""
poweroff -f
