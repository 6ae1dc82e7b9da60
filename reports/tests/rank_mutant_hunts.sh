#!/usr/bin/env bash
# `bitparity mutants` hunts the multi-rank mutants over ranks.
#   rank_mutant_hunts.sh BITPARITY real    three of them through the real mpirun: each killed by its property
#   rank_mutant_hunts.sh BITPARITY judged  a stand-in launcher (BITPARITY_MPIRUN) plays the runs: a
#                                          surviving mutant, a failure where the fault cannot reach, a
#                                          broken run and a hung run (no failing row in ten budgets: a
#                                          harness error, not a survivor) are judged as such, and a row
#                                          that failed before a stop kills; refusals
set -uo pipefail
bitparity="$1"; mode="$2"
work=$(mktemp -d)
trap 'pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if [ "$mode" = real ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  "$bitparity" mutants --only sharded-gradients-by-position --only storage-nan-canonicalising-copy \
    --only checkpoint-maps-not-restored --seconds 120 --json "$work/m.json" >"$work/out.txt" 2>&1
  code=$?
  grep -E "^(KILLED|SURVIVED|HARNESS)" "$work/out.txt"
  [ "$code" -eq 0 ] || { cat "$work/out.txt"; fail "exit $code"; }
  grep -q "^kill times: median .* over 3 kills$" "$work/out.txt" || { cat "$work/out.txt"; fail "no kill-time summary"; }
  python3 - "$work/m.json" <<'EOF' || fail "the hunts over ranks are not recorded as kills by their property"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "bitparity.mutants/3" and d["complete"], d
expected = {"sharded-gradients-by-position": "P6", "storage-nan-canonicalising-copy": "P10", "checkpoint-maps-not-restored": "P11"}
assert {m["name"] for m in d["mutants"]} == set(expected), d["mutants"]
times = sorted((m["seconds"], m["name"]) for m in d["mutants"])
k = d["kill_seconds"]
assert k["median"] == times[1][0] and (k["slowest"], k["slowest_mutant"]) == times[-1], (k, times)
for m in d["mutants"]:
    assert m["killed"] and not m["harness_error"] and m["over_ranks"] == 3, m
    assert m["property"] == expected[m["name"]] and "on 3 ranks" in m["target"] and m["replay"].startswith("mpirun -np 3"), m
EOF
  echo "rank mutant hunts: passed"
  exit 0
fi

# The stand-in launcher: `LAUNCHER -np 3 BITPARITY sharded --mutant NAME --seed S ... --json FILE`.
cat >"$work/launcher" <<EOF
#!/usr/bin/env bash
rows=""; seed=""
while [ \$# -gt 0 ]; do
  case "\$1" in --json) rows="\$2"; shift ;; --seed) seed="\$2"; shift ;; esac
  shift
done
echo "\$seed" >>"$work/seeds"
row() { echo "{\"property\": \"\$1\", \"entry\": \"fp32 step\", \"target\": \"adam\", \"dtype\": \"f32\", \"layout\": \"zero-3\", \"world_size\": 3, \"wrong_elements\": \$2, \"counterexample\": \"element 7\"}"; }
case "\$STAND_IN" in
  survive) echo "{\"results\": [\$(row P6 0), \$(row P2r 0)]}" >"\$rows"; exit 1 ;;
  unreached) echo "{\"results\": [\$(row P6 4), \$(row P2r 2)]}" >"\$rows"; exit 0 ;;
  broken) echo "error: the stand-in broke"; exit 5 ;;
  hang) exec sleep 300 ;;
  late) # the first row kills, the run goes on past the budget and is stopped
    echo "{\"results\": [\$(row P6 3)], \"interrupted\": \"SIGTERM\"}" >"\$rows"; exec sleep 300 ;;
esac
EOF
chmod +x "$work/launcher"
export BITPARITY_MPIRUN="$work/launcher"

run() {  # run STAND_IN SECONDS EXPECTED_EXIT PATTERN
  rm -f "$work/seeds"
  STAND_IN=$1 "$bitparity" mutants --only sharded-shared-key-space --seconds "$2" --seed 5 --json "$work/$1.json" >"$work/$1.txt" 2>&1
  code=$?
  grep -E -A1 "^(KILLED|SURVIVED|HARNESS)" "$work/$1.txt"
  [ "$code" -eq "$3" ] || fail "$1: exit $code, expected $3"
  grep -q -E "$4" "$work/$1.txt" || fail "$1: no line matching '$4'"
}
run survive 1 1 "^SURVIVED +sharded-shared-key-space"
head -n 2 "$work/seeds" | tr '\n' ' ' | grep -q "^5 6 " || fail "survive: the rounds did not take seeds 5, 6, ... ($(tr '\n' ' ' <"$work/seeds"))"
run unreached 10 1 "^HARNESS +sharded-shared-key-space +failed P2r on fp32 step adam/f32 zero-3 on 3 ranks"
run broken 10 1 "^HARNESS +sharded-shared-key-space +its run broke"
grep -q "ended with exit 5 and wrote no rows: error: the stand-in broke" "$work/broken.txt" || fail "broken: the reason is not given"
started=$(date +%s)
# A first run may take ten budgets (a loaded machine): stopped then without a failing row, it proved
# nothing: not a survivor.
run hang 1 1 "^HARNESS +sharded-shared-key-space +its run broke"
grep -q "the first run over ranks was stopped after 10s without a failing row" "$work/hang.txt" || fail "hang: the reason is not given"
elapsed=$(( $(date +%s) - started ))
[ "$elapsed" -ge 9 ] && [ "$elapsed" -le 25 ] || fail "hang: the hung first run was not stopped at ten budgets (${elapsed} s)"
sleep 1
pgrep -f "$work/launcher" >/dev/null && fail "hang: the hung launcher is still running"
# A row that failed before the stop still kills.
run late 1 0 "^KILLED +sharded-shared-key-space +by P6"

# Refusals, before any work (exit 2, one line).
refused() {  # refused PATTERN ARGS...
  local pattern=$1; shift
  "$@" >"$work/refused.txt" 2>&1
  code=$?
  [ "$code" -eq 2 ] && tail -n 1 "$work/refused.txt" | grep -q "^error: .*$pattern" || { cat "$work/refused.txt"; fail "not refused with '$pattern' (exit $code)"; }
}
refused "not hunted here: .*ctest -R DevicePlacement" "$bitparity" mutants --only checkpoint-states-left-on-cpu
refused "no temporary folder for bitparity-rank-hunt: .*set TMPDIR to a writable folder" env TMPDIR="$work/none" "$bitparity" mutants --only sharded-unaligned-shards
refused "BITPARITY_MPIRUN=$work/none is not an executable" env BITPARITY_MPIRUN="$work/none" "$bitparity" mutants --only sharded-unaligned-shards
echo "rank mutant hunts judged: passed"
