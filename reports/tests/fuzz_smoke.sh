#!/usr/bin/env bash
# A short run of `bitparity fuzz` and `bitparity replay` as users run them: a clean run passes, a
# mutant is found, saved, replayed and still killed, runs repeat from their seed, SIGTERM stops
# with a summary and the state, a killed run leaves a readable corpus, and the next run resumes.
# The commands it prints run as printed when a path holds a space or a quote (they were not quoted).
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

echo "== a clean run on cpu, two workers"
"$bitparity" fuzz --budget 12s --jobs 2 --corpus "$work/clean" --json "$work/clean.json" --seed 3 --log-every 4 >"$work/clean.txt" 2>&1
code=$?
cat "$work/clean.txt"
[ "$code" -eq 0 ] || fail "a clean run exited $code"
python3 - "$work/clean.json" <<'EOF' || fail "the summary JSON lacks suites or cases"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "bitparity.fuzz/1" and d["total"]["cases"] > 0 and not d["failures"], d["total"]
for suite in ("quant", "optim32", "optim8"):
    assert d["suites"][suite]["cases"] > 0, suite
EOF
grep -q "cases per property:" "$work/clean.txt" || fail "no cases per property in the summary"

echo "== a mutant is found, saved once, replayed"
"$bitparity" fuzz --implementation mutant:stale-absmax --stop-on-failure --budget 30s --seed 3 --corpus "$work/kill" >"$work/kill.txt" 2>&1
code=$?
cat "$work/kill.txt"
[ "$code" -eq 1 ] || fail "the mutant run exited $code, expected 1"
files=$(ls "$work/kill/cases" | wc -l)
[ "$files" -eq 1 ] || fail "expected one saved case, found $files"
python3 - "$work/kill/cases"/*.json "$work/kill.txt" <<'EOF' || fail "the saved case's values were not made simpler, or the printed violation is not the saved case's"
import json, sys
case = json.load(open(sys.argv[1]))
assert case["found"]["values_simplified"][0] == "values rounded down to powers of two", case["found"]
lines = open(sys.argv[2]).read().splitlines()
printed = lines[next(i for i, l in enumerate(lines) if l.startswith("FAILED ")) + 1].strip()
assert printed == case["violation"].splitlines()[0].strip(), (printed, case["violation"])
EOF
"$bitparity" replay "$work/kill" | tail -n 3 || fail "the saved case no longer kills its mutant"
"$bitparity" replay "$work/kill" --implementation cpu | tail -n 1 || fail "the saved case fails on cpu"
"$bitparity" fuzz --implementation mutant:stale-absmax --stop-on-failure --budget 30s --seed 3 --first-visit 0 --corpus "$work/kill" >"$work/kill2.txt" 2>&1
grep -q "already in the corpus" "$work/kill2.txt" || fail "the same failure was not recognised as already saved"
[ "$(ls "$work/kill/cases" | wc -l)" -eq 1 ] || fail "the same case was saved twice"

echo "== the same seed and visits give the same run"
for run in a b; do
  "$bitparity" fuzz --jobs 1 --visits 25 --seed 7 --first-visit 0 --budget 5m --corpus "$work/same-$run" --json "$work/same-$run.json" >/dev/null 2>&1 \
    || fail "the reproducible run $run failed"
done
python3 - "$work/same-a.json" "$work/same-b.json" <<'EOF' || fail "two runs from one seed differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
key = lambda d: {p: (t["visits"], t["cases"], t["elements"]) for p, t in d["properties"].items()}
assert key(a) == key(b) and a["total"]["cases"] > 0, (key(a), key(b))
EOF

echo "== SIGTERM stops the run with a summary and saves the state"
"$bitparity" fuzz --budget 60s --jobs 2 --corpus "$work/term" --seed 3 >"$work/term.txt" 2>&1 &
pid=$!
sleep 4
kill -TERM "$pid"
wait "$pid"
code=$?
tail -n 2 "$work/term.txt"
[ "$code" -eq 143 ] || fail "SIGTERM gave exit $code, expected 143"
grep -q "interrupted by SIGTERM" "$work/term.txt" || fail "no summary after SIGTERM"
next=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_visit"])' "$work/term/fuzz-state.json") || fail "no state"
[ "$next" -gt 0 ] || fail "the state did not move"
sleep 1
pgrep -f "$work/term" >/dev/null && fail "workers were left running"

echo "== the next run resumes where the state left off"
"$bitparity" fuzz --visits 2 --budget 60s --corpus "$work/term" --seed 4 >"$work/resume.txt" 2>&1 || fail "the resumed run failed"
grep -q "first visit $next," "$work/resume.txt" || fail "the run did not resume at visit $next: $(head -n 1 "$work/resume.txt")"

echo "== a worker that crashes is a failure, and the run goes on after the visit"
BITPARITY_TEST_FUZZ_FAULT=crash:3 "$bitparity" fuzz --budget 6s --jobs 1 --seed 3 --first-visit 0 --corpus "$work/crash" \
  --json "$work/crash.json" >"$work/crash.txt" 2>&1
code=$?
grep -A1 "^FAILED" "$work/crash.txt" | head -n 2
[ "$code" -eq 1 ] || fail "a crashed worker gave exit $code, expected 1"
python3 - "$work/crash.json" <<'EOF' || fail "the crash was not reported with its visit, or the run stopped there"
import json, sys
d = json.load(open(sys.argv[1]))
crash = [f for f in d["failures"] if f.get("event") == "crash"]
assert crash and crash[0]["visit"] == 3 and "Aborted" in crash[0]["violation"], d["failures"]
assert d["next_visit"] > 5 and d["total"]["visits"] > 4, (d["next_visit"], d["total"])
EOF

echo "== a killed run leaves only whole case files"
"$bitparity" fuzz --implementation mutant:optim8-ignore-strides --implementation mutant:ignore-strides --budget 60s --jobs 2 \
  --corpus "$work/killed" >/dev/null 2>&1 &
pid=$!
# Killed once it has saved a case (a loaded machine may take longer than a few seconds to find one).
for _ in $(seq 1 120); do
  [ -n "$(ls "$work/killed/cases" 2>/dev/null)" ] && break
  sleep 0.5
done
sleep 1
kill -KILL "$pid"
wait "$pid" 2>/dev/null
sleep 2
pgrep -f "$work/killed" >/dev/null && fail "workers outlived their killed supervisor"
[ "$(ls "$work/killed/cases" | wc -l)" -gt 0 ] || fail "the killed run saved nothing"
"$bitparity" replay "$work/killed" | tail -n 1 || fail "a case file of the killed run does not replay"
echo "== the printed replay and rerun commands run as printed from a corpus whose path has a space and a quote"
quoted_corpus="$work/my corpus's"
"$bitparity" fuzz --implementation mutant:approximate-division --suite quant --format dynamic8-signed --property P7 --dtype f32 \
  --visits 20 --stop-on-failure --corpus "$quoted_corpus" --seed 1 >"$work/quoted.txt" 2>&1
replay_line=$(grep -m1 '^  replay: ' "$work/quoted.txt" | sed 's/^  replay: //')
rerun_line=$(grep -m1 '^  rerun this visit: ' "$work/quoted.txt" | sed 's/^  rerun this visit: //')
[ -n "$replay_line" ] && [ -n "$rerun_line" ] || { cat "$work/quoted.txt"; fail "no replay or rerun command printed"; }
eval "$replay_line" >"$work/quoted-replay.txt" 2>&1 && grep -q "1 kill their mutant" "$work/quoted-replay.txt" ||
  { cat "$work/quoted-replay.txt"; fail "the printed replay command did not run as printed: $replay_line"; }
eval "$rerun_line" >"$work/quoted-rerun.txt" 2>&1
[ $? -eq 1 ] && grep -q "^FAILED" "$work/quoted-rerun.txt" || { cat "$work/quoted-rerun.txt"; fail "the printed rerun command did not run as printed: $rerun_line"; }
echo "fuzz smoke: passed"
