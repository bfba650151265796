#!/usr/bin/env bash
# Run every executable test script given (or found in the given folders).
# A script passes with exit 0, is skipped with exit 77 (it must print why),
# fails otherwise. Output of a failing script is shown; of a passing one,
# only its "NOTE:" lines (a retry or a second measurement: a pass that
# needed one is worth seeing in CI's log). A summary line
# "NAME: N passed, N failed, N skipped" closes the run.
#   tests/run-scripts.sh LABEL PATH...
set -u
label=$1; shift
pass=0 fail=0 skip=0 failed=()
: "${CAPVISOR:=build/capvisor}"
export CAPVISOR
scripts=()
for p in "$@"; do
	if [[ -d $p ]]; then
		while IFS= read -r f; do scripts+=("$f"); done < <(find "$p" -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort)
	else
		scripts+=("$p")
	fi
done
for t in "${scripts[@]}"; do
	log=$(mktemp)
	start=$(date +%s.%N)
	"$t" >"$log" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $t (${secs}s)"
	   grep -E '^ *NOTE:' "$log" | head -n 10 | sed 's/^ */    /' ;;
	77) skip=$((skip + 1)); echo "SKIP  $t: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$t"); echo "FAIL  $t (exit $rc, ${secs}s)"
	   # The failing checks first (a long log's tail may not hold them), then the tail.
	   grep -E '^ *FAIL' "$log" | head -n 20 | sed 's/^/    ! /'
	   sed 's/^/    | /' "$log" | tail -n 60 ;;
	esac
	rm -f "$log"
done
echo "$label: $pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
