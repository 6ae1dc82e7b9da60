#!/usr/bin/env bash
# Hostile plugins in their plugin host (fixtures/PLUGIN_HOST.md): whatever the library does inside a
# call (exit, a fault, an abort, a hang, a write past an output or into an input) is a finding named
# "failed inside a call" that says what happened, the run goes on with a fresh host and ends by itself
# with exit 1, and bitparity never dies by a signal. An abort while loading ends the run with exit 5.
# A plugin that keeps state between calls fails P14 (against a fresh host); one that writes into an
# input, loaded in process, fails P13.
set -uo pipefail
bitparity="$1"; faulty="$2"; corpus="$3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset BITPARITY_PLUGIN_IN_PROCESS
select=(--suite quant --format dynamic8-signed --dtype f32 --cases 2)

# hostile VARIABLE=VALUE PATTERN: the faulty plugin with that fault gives findings whose counterexample
# matches PATTERN, and no other finding.
hostile() {
  local fault="$1" pattern="$2"
  echo "== $fault"
  env "$fault" BITPARITY_PLUGIN_WATCHDOG_SECONDS=2 timeout 600 "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" \
    --json "$work/out.json" >"$work/out.txt" 2>&1
  local code=$?
  tail -n 2 "$work/out.txt"
  [ "$code" -eq 1 ] || { cat "$work/out.txt"; fail "$fault: exit $code, not 1 (a finding)"; }
  python3 - "$work/out.json" "$pattern" <<'PYTHON' || fail "$fault: the findings do not say what happened"
import json, re, sys
doc = json.load(open(sys.argv[1]))
findings = doc["findings"]
assert findings, "no finding"
for f in findings:
    assert f["class"] == "failed inside a call", (f["class"], f["counterexample"][:300])
    assert re.search(sys.argv[2], f["counterexample"]), f["counterexample"][:300]
# The run went on after the first fault: every selected row ran.
assert all("not_applicable" in r or "counterexample" in r or r.get("violations") == 0 for r in doc["results"])
PYTHON
}

call="plugin:$faulty quantize \\(dynamic8-signed, f32, [0-9]+ elements, block size [0-9]+\\)"
hostile BITPARITY_FAULTY_PLUGIN_EXITS=1 "$call called exit\\(1\\)"
hostile BITPARITY_FAULTY_PLUGIN_CRASHES=segv "$call crashed with SIGSEGV"
hostile BITPARITY_FAULTY_PLUGIN_CRASHES=abort "$call crashed with SIGABRT"
hostile BITPARITY_FAULTY_PLUGIN_HANGS=1 "$call did not return within 2 s \\(hung\\); its host was killed. A slower library"
hostile BITPARITY_FAULTY_PLUGIN_WRITES_PAST=1 "$call wrote 1 bytes past the end of 'codes'"
hostile BITPARITY_FAULTY_PLUGIN_WRITES_PAST=100 "$call crashed with SIGSEGV: it wrote 100 bytes past the end of 'codes'"
hostile BITPARITY_FAULTY_PLUGIN_WRITES_PAST=100000 "$call crashed with SIGSEGV: it wrote [0-9]+ bytes past the end of '[a-z]+', the call's last buffer"
hostile BITPARITY_FAULTY_PLUGIN_WRITES_INPUT=1 "$call crashed with SIGSEGV: it wrote into 'input', an input, at byte 0"

echo "== a hung call and one SIGTERM: the run ends at once, its host killed, an earlier results file kept"
echo '{"earlier": true}' > "$work/kept.json"
BITPARITY_FAULTY_PLUGIN_HANGS=1 "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" --json "$work/kept.json" \
  >"$work/hung.txt" 2>&1 &
pid=$!
sleep 2
start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid"
code=$?
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
tail -n 1 "$work/hung.txt"
[ "$code" -eq 143 ] || { cat "$work/hung.txt"; fail "a hung hosted call and one SIGTERM gave exit $code, not 143"; }
[ "$took_ms" -le 2000 ] || fail "the run took $took_ms ms to end after SIGTERM (the hung call's host should be killed at once)"
grep -q "^error: interrupted by SIGTERM during a plugin call, whose host was killed" "$work/hung.txt" || fail "the stop does not say why"
grep -q '"earlier": true' "$work/kept.json" || fail "the earlier results file was changed"
pgrep -f "bitparity-plugin-host .* $pid\$" >/dev/null && fail "the hung call's host is still running"

echo "== fuzz: a hung call and one SIGTERM are an interruption, not failures of its workers"
BITPARITY_FAULTY_PLUGIN_HANGS=1 "$bitparity" fuzz --implementation "plugin:$faulty" --suite quant --format dynamic8-signed \
  --dtype f32 --budget 60s --jobs 2 --corpus "$work/hung-corpus" --json "$work/hung-fuzz.json" >"$work/hung-fuzz.txt" 2>&1 &
pid=$!
sleep 3
kill -TERM "$pid"
wait "$pid"
code=$?
[ "$code" -eq 143 ] || { cat "$work/hung-fuzz.txt"; fail "fuzz on a hung call and one SIGTERM gave exit $code, not 143"; }
grep -q "the worker exited with code" "$work/hung-fuzz.txt" && { cat "$work/hung-fuzz.txt"; fail "the stopped workers were counted as failures"; }
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s.get("failures", 0) == 0, s' "$work/hung-corpus/fuzz-state.json" \
  || fail "the corpus state counts the interruption as failures"

# findings_of FILE CLASS PATTERN: the run's findings are all of CLASS, matching PATTERN, and there is one.
findings_of() {
  python3 - "$@" <<'PYTHON'
import json, re, sys
doc = json.load(open(sys.argv[1]))
findings = doc["findings"]
assert findings, "no finding"
for f in findings:
    assert f["class"] == sys.argv[2], (f["class"], f["counterexample"][:300])
    assert re.search(sys.argv[3], f["counterexample"]), f["counterexample"][:300]
PYTHON
}
p14=(--suite quant --property P14 --format dynamic8-signed --dtype f32 --cases 10)

echo "== a plugin whose results depend on an earlier call (P14 against a fresh host)"
BITPARITY_FAULTY_PLUGIN_REMEMBERS_MAP=1 "$bitparity" check --implementation "plugin:$faulty" "${p14[@]}" --json "$work/state.json" >"$work/state.txt" 2>&1
code=$?
tail -n 3 "$work/state.txt"
[ "$code" -eq 1 ] || { cat "$work/state.txt"; fail "a plugin keeping its first map gave exit $code, not 1"; }
findings_of "$work/state.json" "depends on earlier calls" "[0-9] of 3 in order vs in reverse order" || fail "P14's finding does not say which call"
echo "== each failing P14 row's replay command fails the same way alone"
python3 -c 'import json, sys; [print(r["replay"]) for r in json.load(open(sys.argv[1]))["results"] if r.get("replay")]' "$work/state.json" >"$work/replays.txt"
[ -s "$work/replays.txt" ] || fail "no failing P14 row has a replay command"
while read -r replay; do
  BITPARITY_FAULTY_PLUGIN_REMEMBERS_MAP=1 eval "$replay" >"$work/replayed.txt" 2>&1
  code=$?
  [ "$code" -eq 1 ] || { cat "$work/replayed.txt"; fail "the P14 replay gave exit $code, not 1: $replay"; }
done <"$work/replays.txt"
echo "== without that fault P14 holds on the same plugin"
"$bitparity" check --implementation "plugin:$faulty" "${p14[@]}" >"$work/nostate.txt" 2>&1 || { cat "$work/nostate.txt"; fail "P14 failed on a plugin without state"; }
echo "== loaded into bitparity, a plugin has no fresh instance: P14 is not applicable"
BITPARITY_PLUGIN_IN_PROCESS=1 "$bitparity" check --implementation "plugin:$faulty" "${p14[@]}" >"$work/inproc.txt" 2>&1
grep -q "no fresh instance" "$work/inproc.txt" || { cat "$work/inproc.txt"; fail "in process, P14 does not say why it is not applicable"; }

echo "== loaded into bitparity, a write into an input is P13's finding (hosted, it faults: above)"
BITPARITY_PLUGIN_IN_PROCESS=1 BITPARITY_FAULTY_PLUGIN_WRITES_INPUT=1 "$bitparity" check --implementation "plugin:$faulty" \
  --suite quant --property P13 --format dynamic8-signed --dtype f32 --cases 2 --json "$work/input.json" >"$work/input.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/input.txt"; fail "a write into the input in process gave exit $code, not 1"; }
findings_of "$work/input.json" "changes an input" "quantize changed its input 'input': [0-9]+ of [0-9]+ bytes differ, the first at byte 0" ||
  fail "P13's finding does not name the input and the byte"

echo "== a failing row's replay command replays the fault in a fresh host"
BITPARITY_FAULTY_PLUGIN_CRASHES=segv "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" --json "$work/crash.json" >/dev/null 2>&1
replay=$(python3 -c 'import json, sys; print(next(r["replay"] for r in json.load(open(sys.argv[1]))["results"] if r.get("replay")))' "$work/crash.json")
BITPARITY_FAULTY_PLUGIN_CRASHES=segv eval "$replay" >"$work/replayed.txt" 2>&1
code=$?
[ "$code" -eq 1 ] && grep -q "crashed with SIGSEGV" "$work/replayed.txt" || { cat "$work/replayed.txt"; fail "the replay gave exit $code: $replay"; }

echo "== a plugin that aborts while it loads"
BITPARITY_FAULTY_PLUGIN_ABORTS_AT_LOAD=1 "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" >"$work/load.txt" 2>&1
code=$?
cat "$work/load.txt"
[ "$code" -eq 5 ] || fail "an abort while loading gave exit $code, not 5"
grep -q "^error: plugin:$faulty (its static constructors or bitparity_plugin_v1(), loading in its plugin host) crashed with SIGABRT$" \
  "$work/load.txt" || fail "the abort while loading does not name the plugin and the signal"

echo "== a crash while loading is exit 5 in every command, not a refusal of bad input"
case_file=$(ls "$corpus"/cases/P7-dynamic8-signed-f32-64-mutant.stale-absmax-*.json | head -n 1)
for command in "fuzz --budget 2s --suite quant --format nf4 --corpus $work/load-corpus" "replay $case_file" \
               "report --out $work/load-report --steps 2 --elements 8 --check-cases 1 --skip-sweeps"; do
  # shellcheck disable=SC2086
  BITPARITY_FAULTY_PLUGIN_ABORTS_AT_LOAD=1 "$bitparity" $command --implementation "plugin:$faulty" >"$work/load2.txt" 2>&1
  code=$?
  [ "$code" -eq 5 ] && grep -q "crashed with SIGABRT" "$work/load2.txt" || { cat "$work/load2.txt"; fail "$command: exit $code"; }
done

echo "== a host of the user's own that does not speak the protocol is named, not the library"
BITPARITY_PLUGIN_HOST=/bin/true "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" >"$work/host.txt" 2>&1
code=$?
[ "$code" -eq 5 ] && grep -q "the host was BITPARITY_PLUGIN_HOST=/bin/true: unset it" "$work/host.txt" || { cat "$work/host.txt"; fail "a foreign host: exit $code"; }

echo "== a plugin named without a folder is the file here, as a path is"
cp "$faulty" "$work/here.so"
(cd "$work" && "$bitparity" check --implementation plugin:here.so --suite quant --property P7 --format nf4 --dtype f32 --cases 1 >here.txt 2>&1)
code=$?
[ "$code" -eq 1 ] || { cat "$work/here.txt"; fail "plugin:here.so in its folder: exit $code"; }

echo "== a plugin that offers nothing the selection checks"
BITPARITY_FAULTY_PLUGIN_QUANTIZE_ONLY=1 "$bitparity" check --implementation "plugin:$faulty" --suite quant --property P7d >"$work/none.txt" 2>&1
code=$?
cat "$work/none.txt"
[ "$code" -eq 2 ] && grep -q "^error: nothing to check" "$work/none.txt" || fail "a run that checked nothing gave exit $code"

echo "== bad watchdog settings are refused"
BITPARITY_PLUGIN_WATCHDOG_SECONDS=soon "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" >"$work/watchdog.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "BITPARITY_PLUGIN_WATCHDOG_SECONDS='soon' is not a number of seconds" "$work/watchdog.txt" ||
  { cat "$work/watchdog.txt"; fail "a bad watchdog setting gave exit $code"; }
BITPARITY_PLUGIN_IN_PROCESS=maybe "$bitparity" check --implementation "plugin:$faulty" "${select[@]}" >"$work/mode.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "BITPARITY_PLUGIN_IN_PROCESS='maybe'" "$work/mode.txt" || { cat "$work/mode.txt"; fail "a bad mode gave exit $code"; }
echo "PASS"
