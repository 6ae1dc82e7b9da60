#!/usr/bin/env bash
# `bitparity fuzz` over the suites that run over ranks, through the real mpirun.
#   fuzz_over_ranks.sh BITPARITY kills     a multi-rank fault (P10) is found, shrunk, saved once to
#                                          CORPUS/over-ranks and replayed: it kills its fault and holds on the cpu
#   fuzz_over_ranks.sh BITPARITY shrinks   a P6, a P11 and a P2r failure are saved with their inputs, shrunk;
#                                          the files run through `sharded --case` without the generator
#   (both shrink under a --shrink-budget that a loaded machine cannot outlast: the default 30 s
#   ended P6's shrinking before its case was smallest while ctest ran other tests beside it)
#   fuzz_over_ranks.sh BITPARITY holds     the real driver holds for two rounds; a second run resumes
#                                          the round-robin where the first stopped; a budget cut short passes
#   fuzz_over_ranks.sh BITPARITY killed    a fuzz run killed with SIGKILL during a long round leaves no
#                                          mpirun or rank running, and no temporary folder; one killed with
#                                          its reaper (a control group killed) leaves a folder that the
#                                          next run removes, and folders of live owners (or other hosts) stay
#   fuzz_over_ranks.sh BITPARITY refusals  bad input over ranks: exit 2, one line, nothing run
set -uo pipefail
bitparity="$1"; mode="$2"
work=$(mktemp -d)
trap 'pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

if [ "$mode" = kills ]; then
  for run in 1 2; do  # the same seed and first round twice: the second finds the same row
    "$bitparity" fuzz --implementation mutant:storage-nan-canonicalising-copy --budget 120s --shrink-budget 4m --seed 7 --first-visit 0 --stop-on-failure \
      --corpus "$work/corpus" --json "$work/fuzz$run.json" >"$work/out$run.txt" 2>&1
    code=$?
    cat "$work/out$run.txt"
    [ "$code" -eq 1 ] || fail "run $run: exit $code, expected 1 (a failure)"
  done
  python3 - "$work/fuzz1.json" "$work/fuzz2.json" <<'PY' || fail "the fault's failure is not saved once, as a case over ranks"
import json, os, sys
first, second = (json.load(open(p)) for p in sys.argv[1:])
f = first["failures"][0]
assert first["schema"] == "bitparity.fuzz/1" and first["over_ranks"]["worlds"] == [2, 3, 4, 5], first
assert f["property"] == "P10" and f["implementation"] == "mutant:storage-nan-canonicalising-copy" and f["added"], f
assert f["file"].endswith(".json") and "/over-ranks/" in f["file"] and os.path.exists(f["file"]), f
case = json.load(open(f["file"]))
assert case["schema"] == "bitparity.rank-case/2" and case["arguments"][0] == "sharded" and "--json" not in case["arguments"], case
# The weight as stored travels as data, shrunk: every storage element as its bits.
assert "sharded --case" in case["reproduction"] and case["shrinking"]["complete"], case
assert len(case["case"]["storage"]) == case["shrinking"]["to"]["storage_elements"] <= case["shrinking"]["from"]["storage_elements"], case
assert all(e.startswith("0x") for e in case["case"]["storage"]), case
assert case["world_size"] == f["world_size"] and case["property"] == "P10", case
# The same seed finds the same row again: stored once.
g = second["failures"][0]
assert g["file"] == f["file"] and not g["added"] and second["new_corpus_cases"] == 0, g
assert len(os.listdir(os.path.dirname(f["file"]))) == 1, os.listdir(os.path.dirname(f["file"]))
PY
  "$bitparity" replay "$work/corpus" >"$work/replay.txt" 2>&1 || { cat "$work/replay.txt"; fail "replay on the fault: exit $?"; }
  grep -q "1 kill their mutant, 0 unexpected" "$work/replay.txt" || { cat "$work/replay.txt"; fail "the saved case does not kill its fault"; }
  "$bitparity" replay "$work/corpus" --implementation cpu >"$work/cpu.txt" 2>&1 || { cat "$work/cpu.txt"; fail "replay on the cpu: exit $?"; }
  grep -q "1 hold, 0 kill their mutant, 0 unexpected" "$work/cpu.txt" || { cat "$work/cpu.txt"; fail "the saved case does not hold on the cpu"; }
  # A mutant that alters only Lion cannot fail a storage case: not applicable there, so the replay
  # would check nothing and is refused (exit 2), rather than say it survives.
  "$bitparity" replay "$work/corpus" --implementation mutant:lion-update-with-beta2 >"$work/other.txt" 2>&1
  code=$?
  [ "$code" -eq 2 ] && grep -q "^error: nothing to check: none of the 1 cases applies (mutant:lion-update-with-beta2 does not alter this case's storage" "$work/other.txt" ||
    { cat "$work/other.txt"; fail "a case that does not fail on a fault passed (exit $code)"; }
  echo "fuzz over ranks kills: passed"
  exit 0
fi

if [ "$mode" = shrinks ]; then
  for fault in sharded-fp32-reduce-in-rank-order checkpoint-states-by-position; do
    "$bitparity" fuzz --implementation mutant:$fault --budget 120s --shrink-budget 4m --seed 3 --first-visit 0 --stop-on-failure \
      --corpus "$work/$fault" --json "$work/$fault.json" >"$work/$fault.txt" 2>&1
    code=$?
    cat "$work/$fault.txt"
    [ "$code" -eq 1 ] || fail "$fault: exit $code, expected 1 (a failure)"
    file=$(python3 - "$work/$fault.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["failures"][0]
case = json.load(open(f["file"]))
shrinking = case["shrinking"]
assert case["schema"] == "bitparity.rank-case/2" and "case" in case and "sharded --case" in case["reproduction"], case
assert shrinking["complete"] and shrinking["runs"] > 1 and shrinking["kept"], shrinking
before, after = shrinking["from"], shrinking["to"]
assert after["elements"] < before["elements"] and after["steps"] <= before["steps"], shrinking
assert case["world_size"] == after["world_size"] and case["property"] in ("P6", "P11"), case
# Only what runs it: the case holds the row, steps, worlds and values.
assert case["arguments"][1:3] == ["--mutant", f["implementation"][len("mutant:"):]] and "--seed" not in case["arguments"], case
values = case["case"]["initial"]
assert sum(len(v) for v in values.values()) == after["elements"], values
print(f["file"], case["world_size"])
PY
) || fail "$fault: the saved case does not carry shrunk inputs"
    set -- $file
    # The file runs without the generator: it kills its fault and holds on the cpu.
    mpirun -np "$2" "$bitparity" sharded --case "$1" --mutant $fault >"$work/run.txt" 2>&1 ||
      { cat "$work/run.txt"; fail "$fault: sharded --case does not kill the fault"; }
    mpirun -np "$2" "$bitparity" sharded --case "$1" >"$work/run.txt" 2>&1 || { cat "$work/run.txt"; fail "$fault: the case fails on the cpu"; }
    "$bitparity" replay "$work/$fault" >"$work/replay.txt" 2>&1 && grep -q "1 kill their mutant, 0 unexpected" "$work/replay.txt" ||
      { cat "$work/replay.txt"; fail "$fault: replay does not kill it"; }
    # A case that lost a value is refused before any rank starts.
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["case"]["gradients"].pop(); json.dump(d, open(sys.argv[2], "w"))' "$1" "$work/cut.json"
    "$bitparity" sharded --case "$work/cut.json" >"$work/cut.txt" 2>&1
    code=$?
    [ "$code" -eq 2 ] && tail -n 1 "$work/cut.txt" | grep -q "^error: .*cut.json: case: 'gradients' lacks the gradient of parameter" ||
      { cat "$work/cut.txt"; fail "$fault: a case without a gradient was not refused (exit $code)"; }
  done
  # P2r (suite sharded): an implementation that ignores strides, found on a gathered view, saved with its tensor.
  "$bitparity" fuzz --suite sharded --implementation mutant:ignore-strides --budget 120s --shrink-budget 4m --seed 3 --first-visit 0 --stop-on-failure \
    --corpus "$work/p2r" --json "$work/p2r.json" >"$work/p2r.txt" 2>&1
  code=$?
  cat "$work/p2r.txt"
  [ "$code" -eq 1 ] || fail "P2r: exit $code, expected 1 (a failure)"
  file=$(python3 - "$work/p2r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d["properties"]) <= {"P6", "P2r"} and set(d["suites"]) == {"sharded"}, d
f = d["failures"][0]
case = json.load(open(f["file"]))
shrinking = case["shrinking"]
assert case["property"] == "P2r" and case["layout"] == "chunk+all_gather" and "sharded --case" in case["reproduction"], case
assert shrinking["complete"] and shrinking["to"]["elements"] < shrinking["from"]["elements"], shrinking
assert case["arguments"] == ["sharded", "--implementation", "mutant:ignore-strides"], case
c = case["case"]
n = 1
for size in c["sizes"]:
    n *= size
assert n == shrinking["to"]["elements"] and all(len(t) == n for t in c["tensors"]), c
assert c["sizes"][c["dim"]] % case["world_size"] == 0, c
print(f["file"], case["world_size"])
PY
) || fail "P2r: the saved case does not carry shrunk inputs"
  set -- $file
  mpirun -np "$2" "$bitparity" sharded --case "$1" --implementation mutant:ignore-strides >"$work/run.txt" 2>&1 &&
    grep -q "mutant mutant:ignore-strides: killed" "$work/run.txt" || { cat "$work/run.txt"; fail "P2r: sharded --case does not kill the mutant"; }
  mpirun -np "$2" "$bitparity" sharded --case "$1" >"$work/run.txt" 2>&1 || { cat "$work/run.txt"; fail "P2r: the case fails on the cpu"; }
  "$bitparity" replay "$work/p2r" >"$work/replay.txt" 2>&1 && grep -q "1 kill their mutant, 0 unexpected" "$work/replay.txt" ||
    { cat "$work/replay.txt"; fail "P2r: replay does not kill it"; }
  # A world that cannot hold one chunk per rank is refused before any work, naming the saved world.
  mpirun -np $(($2 + 1)) "$bitparity" sharded --case "$1" >"$work/world.txt" 2>&1
  grep -q "^error: .*ranks do not divide; run it on a world size that does (it was saved on $2 ranks" "$work/world.txt" ||
    { cat "$work/world.txt"; fail "P2r: a world that does not divide the chunked dimension was not refused"; }
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["case"]["tensors"][0].pop(); json.dump(d, open(sys.argv[2], "w"))' "$1" "$work/cut.json"
  "$bitparity" sharded --case "$work/cut.json" >"$work/cut.txt" 2>&1
  code=$?
  [ "$code" -eq 2 ] && tail -n 1 "$work/cut.txt" | grep -q "^error: .*cut.json: case: the tensor of step 1 holds" ||
    { cat "$work/cut.txt"; fail "P2r: a case without a value was not refused (exit $code)"; }
  echo "fuzz over ranks shrinks: passed"
  exit 0
fi

if [ "$mode" = holds ]; then
  # Two rounds by count, not by time: one of each property, however loaded the machine is.
  "$bitparity" fuzz --suite storage --suite resume --visits 2 --budget 300s --seed 3 --corpus "$work/corpus" --json "$work/a.json" \
    --log-every 1 >"$work/a.txt" 2>"$work/a.err"
  code=$?
  cat "$work/a.txt" "$work/a.err"
  [ "$code" -eq 0 ] || fail "exit $code on the real driver"
  grep -q "^summary: 2 rounds over ranks" "$work/a.txt" || fail "no summary of 2 rounds"
  grep -q "round .* on [2-5] ranks" "$work/a.err" || fail "no progress line"
  next=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_round"])' "$work/corpus/fuzz-state-over-ranks.json")
  [ "$next" -eq 2 ] || fail "the state says next round $next after 2 rounds"
  python3 - "$work/a.json" <<'PY' || fail "the summary JSON does not count both properties"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] and not d["failures"], d
assert set(d["properties"]) == {"P10", "P11"} and set(d["suites"]) == {"storage", "resume"}, d
assert all(p["cases"] > 0 and p["visits"] > 0 for p in d["properties"].values()), d
PY
  "$bitparity" fuzz --suite storage --suite resume --visits 1 --budget 60s --seed 3 --corpus "$work/corpus" >"$work/b.txt" 2>&1 ||
    { cat "$work/b.txt"; fail "second run: exit $?"; }
  grep -q "first round $next," "$work/b.txt" || { cat "$work/b.txt"; fail "the second run did not resume at round $next"; }
  # A budget that ends inside the first round stops it uncounted: nothing was checked, which does not
  # pass (it did: exit 0, "0 rounds"), and the state resumes at the round cut.
  "$bitparity" fuzz --suite storage --suite resume --budget 1s --seed 3 --corpus "$work/corpus" >"$work/c.txt" 2>&1
  code=$?
  [ "$code" -eq 1 ] && grep -q "^summary: 0 rounds" "$work/c.txt" &&
    grep -q "^error: no round over ranks finished within the budget of 1[.0]*s .*give a longer --budget" "$work/c.txt" ||
    { cat "$work/c.txt"; fail "a budget that checked nothing: exit $code"; }
  after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_round"])' "$work/corpus/fuzz-state-over-ranks.json")
  [ "$after" -ge $((next + 1)) ] || fail "the state went from round $((next + 1)) to $after"
  echo "fuzz over ranks holds: passed"
  exit 0
fi

if [ "$mode" = killed ]; then
  export TMPDIR="$work/tmp"
  mkdir -p "$TMPDIR"
  round="$TMPDIR/bitparity-fuzz-over-ranks"  # in the command line of mpirun and of every rank (--json)
  # A late first round: 8 cases per row of P11, a round of many seconds.
  "$bitparity" fuzz --suite resume --first-visit 100 --budget 300s --seed 5 --corpus "$work/corpus" >"$work/k.txt" 2>&1 &
  fuzz=$!
  for _ in $(seq 1 200); do pgrep -f "$round" >/dev/null && break; sleep 0.1; done
  pgrep -f "$round" >/dev/null || { cat "$work/k.txt"; fail "no round over ranks started"; }
  sleep 2
  pgrep -f "$round" >/dev/null || fail "the round ended within 2 s: too short to show anything"
  kill -KILL "$fuzz"
  wait "$fuzz" 2>/dev/null
  for _ in $(seq 1 100); do pgrep -f "$round" >/dev/null || break; sleep 0.1; done
  if pgrep -f "$round" >/dev/null; then
    pgrep -af "$round"
    fail "10 s after fuzz was killed, its round over ranks still runs"
  fi
  for _ in $(seq 1 50); do [ -z "$(ls -A "$TMPDIR")" ] && break; sleep 0.1; done
  [ -z "$(ls -A "$TMPDIR")" ] || { ls -la "$TMPDIR"; fail "a temporary folder was left behind"; }

  # Everything killed at once, the reaper too, as when a runner kills a control group.
  "$bitparity" fuzz --suite resume --first-visit 100 --budget 300s --seed 5 --corpus "$work/corpus" >"$work/k.txt" 2>&1 &
  fuzz=$!
  for _ in $(seq 1 200); do pgrep -f "$round" >/dev/null && break; sleep 0.1; done
  sleep 1  # the ranks' checkpoint folder exists
  # mpirun, the ranks and both reapers name a folder under TMPDIR; nobody runs on while the others die.
  pkill -STOP -f "$TMPDIR"; kill -STOP "$fuzz"
  pkill -KILL -f "$TMPDIR"; kill -KILL "$fuzz"
  wait "$fuzz" 2>/dev/null
  sleep 1
  left=$(cd "$TMPDIR" && ls -d bitparity-fuzz-over-ranks.* 2>/dev/null)
  [ -n "$left" ] || fail "no folder was left: the reaper was not killed with the run"
  [ -f "$TMPDIR/$left/.owner" ] || fail "the folder names no owner"
  [ -n "$(cd "$TMPDIR" && ls -d bitparity-checkpoints.* 2>/dev/null)" ] || fail "no checkpoint folder was left by the killed ranks"
  # Open MPI's session folder of a mpirun killed outright is inside a folder of ours, which goes next.
  [ -n "$(cd "$TMPDIR" && ls -d bitparity-mpirun.*/ompi.* 2>/dev/null)" ] || { ls -laR "$TMPDIR"; fail "no session folder of the killed mpirun in ours"; }
  [ -z "$(cd "$TMPDIR" && ls -d ompi.* 2>/dev/null)" ] || fail "Open MPI's session folder is outside ours"
  # Beside it: a folder whose owner is alive (this shell) and one without an owner file.
  # And one of a dead process on another host (a temporary folder shared between nodes).
  mkdir "$TMPDIR/bitparity-fuzz-over-ranks.LIVE00" "$TMPDIR/bitparity-fuzz-over-ranks.NOOWNR" "$TMPDIR/bitparity-fuzz-over-ranks.OTHERH"
  echo "$$ $(cut -d' ' -f22 /proc/$$/stat) $(cat /proc/sys/kernel/random/boot_id) $(hostname)" >"$TMPDIR/bitparity-fuzz-over-ranks.LIVE00/.owner"
  echo "999999999 1 another-boot another-host-than-$(hostname)" >"$TMPDIR/bitparity-fuzz-over-ranks.OTHERH/.owner"
  "$bitparity" fuzz --suite storage --visits 1 --budget 60s --seed 5 --corpus "$work/corpus2" >"$work/next.txt" 2>&1 ||
    { cat "$work/next.txt"; fail "the next run: exit $?"; }
  [ ! -e "$TMPDIR/$left" ] || fail "the next run did not remove the folder of the killed one ($left)"
  [ -d "$TMPDIR/bitparity-fuzz-over-ranks.LIVE00" ] || fail "the next run removed the folder of a live process"
  [ -d "$TMPDIR/bitparity-fuzz-over-ranks.NOOWNR" ] || fail "the next run removed a folder without an owner file"
  [ -d "$TMPDIR/bitparity-fuzz-over-ranks.OTHERH" ] || fail "the next run removed a folder made on another host"
  [ -z "$(cd "$TMPDIR" && ls -d bitparity-checkpoints.* 2>/dev/null)" ] || fail "the killed ranks' checkpoint folder stays"
  [ -z "$(cd "$TMPDIR" && ls -d bitparity-mpirun.* ompi.* 2>/dev/null)" ] || { ls -la "$TMPDIR"; fail "the killed mpirun's session folder stays"; }
  echo "fuzz over ranks killed: passed"
  exit 0
fi

refused() {  # EXPECTED-TEXT ARGS...: exit 2 and the last line says it
  local expected="$1"; shift
  "$@" >"$work/r.txt" 2>&1
  local code=$?
  [ "$code" -eq 2 ] && tail -n 1 "$work/r.txt" | grep -q "^error: .*$expected" || { cat "$work/r.txt"; fail "$* gave exit $code"; }
}
refused "suite quant runs in one process" "$bitparity" fuzz --suite sharded --suite quant --corpus "$work/c"
refused "--jobs 2: each round over ranks" "$bitparity" fuzz --suite sharded --jobs 2 --corpus "$work/c"
refused "--block-size: the suites over ranks" "$bitparity" fuzz --suite resume --block-size 64 --corpus "$work/c"
refused "only a GPU\|on a GPU" "$bitparity" fuzz --implementation mutant:checkpoint-states-left-on-cpu --corpus "$work/c"
refused "alters only what suite storage checks" "$bitparity" fuzz --suite sharded --implementation mutant:storage-nan-canonicalising-copy --corpus "$work/c"
refused "needs mpirun: BITPARITY_MPIRUN=/nonexistent is not an executable" env BITPARITY_MPIRUN=/nonexistent "$bitparity" fuzz --suite storage --corpus "$work/c"
refused "--budget 5x" "$bitparity" fuzz --suite storage --budget 5x --corpus "$work/c"
refused "--shrink-budget 1h1h: use a duration" "$bitparity" fuzz --suite storage --shrink-budget 1h1h --corpus "$work/c"
refused "--shrink-budget is for the suites over ranks" "$bitparity" fuzz --suite quant --shrink-budget 5m --corpus "$work/c"
refused "--case holds its row, steps, worlds and values; drop --optimizer" "$bitparity" sharded --case "$work/x.json" --optimizer adam
refused "--case holds its row, steps, worlds and values; drop --steps" "$bitparity" sharded --case "$work/x.json" --steps 3
refused "x.json: no such file or folder" "$bitparity" sharded --case "$work/x.json"
# From round 2^50 no round runs: it was "no round finished within the budget", exit 1.
refused "--first-visit is at round 2.50, where the round-robin stops" "$bitparity" fuzz --suite storage --first-visit 1125899906842624 --budget 2s --corpus "$work/end"
echo '{"schema": "bitparity.case/1"}' >"$work/one-process.json"
refused "not a rank case (bitparity.rank-case/2); give a file from CORPUS/over-ranks" "$bitparity" sharded --case "$work/one-process.json"
# A kernel's refusal passed on as bad input says what was wrong, without the kernel's code name.
"$bitparity" sharded --optimizer adamx >"$work/r.txt" 2>&1
tail -n 1 "$work/r.txt" | grep -q "^error: unknown optimizer 'adamx'; expected one of adam" || { cat "$work/r.txt"; fail "the refusal keeps a code name"; }
[ ! -e "$work/c" ] || fail "a refused run made the corpus folder"
mkdir -p "$work/bad/over-ranks"
echo '{"schema": "bitparity.rank-case/1", "property": "P6"}' >"$work/bad/over-ranks/broken.json"
refused "a rank case needs the text field \"entry\"" "$bitparity" replay "$work/bad"
# A saved case of another schema version, and one that holds neither its inputs nor a seed.
saved=$(ls "$(dirname "$0")"/../../properties/corpus/over-ranks/P11-*.json | head -n 1)
python3 - "$saved" "$work" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))
json.dump(dict(case, schema="bitparity.rank-case/9"), open(sys.argv[2] + "/later.json", "w"))
json.dump({k: v for k, v in case.items() if k != "case"}, open(sys.argv[2] + "/no-inputs.json", "w"))
json.dump(dict(case, schema="bitparity.rank-case/1"), open(sys.argv[2] + "/seeded-with-case.json", "w"))
PY
refused "schema 'bitparity.rank-case/9' is not one this build reads" "$bitparity" replay "$work/later.json"
refused "holds no \"case\" and its \"arguments\" no --seed" "$bitparity" replay "$work/no-inputs.json"
refused "names its case by seed, but this one holds a \"case\"; its schema should be bitparity.rank-case/2" \
  "$bitparity" replay "$work/seeded-with-case.json"
echo "fuzz over ranks refusals: passed"
