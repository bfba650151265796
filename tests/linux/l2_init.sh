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

# Two vCPUs: idle, busy on each in turn, idle again.
wl_hetero() {
	report_misc
	report_cpus boot
	report_stat start
	set_governor schedutil
	sleep 4
	sample idle0
	for n in $(cpus); do
		busy_report $n 3 busy$n
	done
	# Idle but for a short task every 100 ms: schedutil only revisits a
	# CPU's request when something runs there.
	taskset 1 sh -c 'i=0; while [ $i -lt 30 ]; do usleep 100000; i=$((i + 1)); done' &
	sleep 3
	sample idle1
	wait
	report_stat end
	report_cpus end
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

# One task on CPU $1, running 16 ms of wall time and stopped 4 ms, until
# duty_stop. Its busy share does not depend on speed (seed 002's
# over-utilized load), so an under-estimated frequency scale feeds back into
# the governor's choice. Its pid is in /tmp/duty.pid.
duty() {
	p=$(spin $1)
	mkdir -p /tmp
	echo $p >/tmp/duty.pid
	while :; do
		usleep 16000
		kill -STOP $p
		usleep 4000
		kill -CONT $p
	done
}

duty_start() {
	duty $1 &
	duty_loop=$!
}

duty_stop() {
	kill $duty_loop
	read -r dp </tmp/duty.pid
	kill -9 $dp
}

# seed 002 on the real guest: the guest's own util_avg of the duty-cycled
# task on CPU $1 and the frequency its governor settles on.
duty_report() {
	num /sys/devices/system/cpu/cpu$1/cpufreq/scaling_cur_freq; cur=$v
	num /sys/devices/system/cpu/cpu$1/cpufreq/cpuinfo_max_freq
	read -r dp </tmp/duty.pid
	j "\"k\":\"duty\",\"cpu\":$1,\"util_avg\":$(util_of $dp),\"cur_freq\":$cur,\"max_freq\":$v"
}

wl_duty() {
	duty_start $1
	sleep 3
	duty_report $1
	sample duty$1
	duty_stop
}

wl=$(sed -n 's/.*capvisor_workload=\([^ ]*\).*/\1/p' /proc/cmdline)
j "\"k\":\"begin\",\"workload\":$(q "$wl"),\"cpus\":$(cpus | wc -l)"
case "$wl" in
hetero) wl_hetero ;;
allbusy) wl_allbusy ;;
hetero_duty) wl_hetero; wl_duty 0 ;;
report) report_misc; report_cpus boot ;;
*) j "\"k\":\"error\",\"msg\":$(q "unknown workload '$wl'")" ;;
esac
report_dmesg
j "\"k\":\"end\""
poweroff -f
