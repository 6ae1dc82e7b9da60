#!/usr/bin/env bash
# External libraries through the plugin ABI (bitparity/plugin.h), with the two plugins built in the
# repository: bitparity's own kernels exported through the ABI (every applicable property holds,
# the rest is "not applicable"), and a deliberately faulty quantizer (the findings name its bugs).
set -uo pipefail
bitparity="$1"; self="$2"; faulty="$3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

echo "== bitparity's kernels through the ABI"
"$bitparity" check --implementation "plugin:$self" --suite quant optim32 optim8 --cases 2 --json "$work/self.json" >"$work/self.txt" 2>&1 \
  || { cat "$work/self.txt"; fail "a property failed on the self plugin"; }
tail -n 3 "$work/self.txt"
python3 - "$work/self.json" <<'PYTHON' || fail "the self plugin's rows are not what the ABI offers"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for r in doc["results"] if r["device"].startswith("plugin:")]
ran = {r["property"].split()[0] for r in rows if "not_applicable" not in r}
na = {r["property"].split()[0] for r in rows if "not_applicable" in r}
assert {"P1", "P2", "P2o", "P3", "P4", "P7", "P7d", "P9", "P9o", "P2q", "P9q"} <= ran, ran
assert {"P8", "P8u"} <= na, na  # stochastic rounding is not in the ABI
assert "findings" not in doc
PYTHON

echo "== --implementation besides --device: both run, and a bad --device is refused (it was dropped unread)"
"$bitparity" check --implementation "plugin:$self" --device cpu --suite quant --format nf4 --dtype f32 --property P7 --cases 1 \
  --json "$work/both.json" >"$work/both.txt" 2>&1 || { cat "$work/both.txt"; fail "--device cpu with a plugin"; }
python3 -c 'import json, sys; d = sorted(r["device"].split(":")[0] for r in json.load(open(sys.argv[1]))["results"]); assert d == ["cpu", "plugin"], d' \
  "$work/both.json" || fail "--device cpu with --implementation plugin: not one row each"
"$bitparity" check --implementation "plugin:$self" --device nonsense --suite quant --cases 1 >"$work/bad-device.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "^error: unknown device 'nonsense'" "$work/bad-device.txt" || { cat "$work/bad-device.txt"; fail "--device nonsense beside --implementation: exit $code"; }

echo "== the faulty quantizer (built for ABI 1, which must still load)"
"$bitparity" check --implementation "plugin:$faulty" --suite quant --cases 4 --json "$work/faulty.json" >"$work/faulty.txt" 2>&1
code=$?
sed -n '/^findings/,$p' "$work/faulty.txt"
[ "$code" -eq 1 ] || fail "the faulty plugin passed (exit $code)"
python3 - "$work/faulty.json" <<'PYTHON' || fail "the findings do not name the faulty plugin's bugs"
import json, sys
doc = json.load(open(sys.argv[1]))
classes = {f["class"] for f in doc["findings"]}
for expected in ("strided-input difference", "not the nearest code", "dequantization not correctly rounded", "map difference"):
    assert expected in classes, (expected, classes)
for f in doc["findings"]:
    assert f["counterexample"] and f["explanation"] and f["target"], f
rows = doc["results"]
def reason(prop, fmt):
    return [r.get("not_applicable", "") for r in rows if r["property"].split()[0] == prop and r["format"] == fmt]
assert reason("P9", "nf4") and all("does not offer" in r for r in reason("P9", "nf4")), "P9 ran on a plugin without a non-finite policy"
assert all(reason("P7", "dynamic8-unsigned")) and any("with only the maps" in r for r in reason("P7", "dynamic8-unsigned")), \
    "a map it does not take was run"
f16_rows = [r for r in rows if r["dtype"] == "f16"]
assert f16_rows and all(r.get("not_applicable") for r in f16_rows), "a dtype it does not take was run"
PYTHON

echo "== a failing row's replay command runs as printed (the plugin through --implementation) and fails again"
replay=$(python3 -c 'import json, sys; print(next(r["replay"] for r in json.load(open(sys.argv[1]))["results"] if r.get("replay")))' "$work/faulty.json")
case "$replay" in *"--implementation plugin:"*) ;; *) fail "the replay names the plugin other than by --implementation: $replay" ;; esac
eval "$replay" >"$work/replayed.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/replayed.txt"; fail "the printed replay gave exit $code, not 1: $replay"; }

# The faults below end an in-process run (BITPARITY_PLUGIN_IN_PROCESS=1, for debuggers) with one line
# naming the call; plugins_hosted.sh covers them in a plugin host, where each is a finding.
export BITPARITY_PLUGIN_IN_PROCESS=1
echo "== in process: a plugin that ends the process inside a call (bitsandbytes' CUDA error checks call exit(1))"
BITPARITY_FAULTY_PLUGIN_EXITS=1 "$bitparity" check --implementation "plugin:$faulty" --suite quant --cases 1 >"$work/exits.txt" 2>&1
code=$?
tail -n 1 "$work/exits.txt"
[ "$code" -eq 5 ] || fail "a plugin's exit(1) inside a call ended the run with $code, not 5 (1 reads as a finding)"
grep -q "^error: plugin:$faulty quantize (.*, [0-9]* elements, block size [0-9]*) called exit() inside the call" "$work/exits.txt" ||
  fail "the exit inside a call does not name the call"
echo "== in process: the same exit inside a fuzz worker is exit 5 for the campaign too"
BITPARITY_FAULTY_PLUGIN_EXITS=1 "$bitparity" fuzz --implementation "plugin:$faulty" --suite quant --format nf4 --dtype f32 \
  --property P7 --budget 4s --seed 1 --corpus "$work/fuzz-exit" >"$work/fuzz-exit.txt" 2>&1
code=$?
[ "$code" -eq 5 ] || { cat "$work/fuzz-exit.txt"; fail "a plugin's exit(1) inside a fuzz worker ended the campaign with $code, not 5"; }

echo "== a plugin that crashes inside a call (a fault, an abort)"
for crash in segv abort; do
  BITPARITY_FAULTY_PLUGIN_CRASHES=$crash "$bitparity" check --implementation "plugin:$faulty" --suite quant --cases 1 >"$work/crash.txt" 2>&1
  code=$?
  tail -n 1 "$work/crash.txt"
  [ "$code" -eq 5 ] || fail "a plugin's $crash inside a call ended the run with $code, not 5"
  grep -q "^error: plugin:$faulty quantize (.*, [0-9]* elements, block size [0-9]*) crashed with SIG\(SEGV\|ABRT\) inside the call" \
    "$work/crash.txt" || fail "the $crash inside a call does not name the call and the signal"
done

echo "== a plugin that aborts while it loads (a static constructor's failed assert)"
BITPARITY_FAULTY_PLUGIN_ABORTS_AT_LOAD=1 "$bitparity" check --implementation "plugin:$faulty" --suite quant --cases 1 >"$work/load.txt" 2>&1
code=$?
cat "$work/load.txt"
[ "$code" -eq 5 ] || fail "a plugin's abort while loading ended the run with $code, not 5"
grep -q "^error: plugin:$faulty (its static constructors or bitparity_plugin_v1()) crashed with SIGABRT while loading" "$work/load.txt" ||
  fail "the abort while loading does not name the plugin and the signal"

echo "== a plugin call that never returns: the first SIGTERM still ends the run, within its grace of 10 s"
BITPARITY_FAULTY_PLUGIN_HANGS=1 "$bitparity" check --implementation "plugin:$faulty" --suite quant --cases 1 >"$work/hangs.txt" 2>&1 &
pid=$!
sleep 2
start=$(date +%s)
kill -TERM "$pid"
wait "$pid"
code=$?
took=$(( $(date +%s) - start ))
tail -n 1 "$work/hangs.txt"
[ "$code" -eq 143 ] || fail "a hung plugin call and one SIGTERM gave exit $code, not 143"
[ "$took" -le 13 ] || fail "the run took $took s to end after SIGTERM"
grep -q "^error: interrupted by SIGTERM, and the run did not reach a point where it could stop within 10 s" "$work/hangs.txt" ||
  fail "the forced stop does not say why"

echo "== two signals at once are one request; a second one 2 s later ends the run at once, saying so"
BITPARITY_FAULTY_PLUGIN_HANGS=1 "$bitparity" check --implementation "plugin:$faulty" --suite quant --cases 1 >"$work/twice.txt" 2>&1 &
pid=$!
sleep 2
kill -INT "$pid"; kill -INT "$pid"  # as `timeout` does: the process, then its group
sleep 2
kill -0 "$pid" 2>/dev/null || fail "two SIGINTs at once ended the run outright"
kill -INT "$pid"
wait "$pid"
code=$?
tail -n 1 "$work/twice.txt"
[ "$code" -eq 130 ] || fail "a second SIGINT gave exit $code, not 130"
grep -q "^error: interrupted a second time; the run ended without writing this run's results" "$work/twice.txt" ||
  fail "the second signal's ending is not said"

unset BITPARITY_PLUGIN_IN_PROCESS
echo "== refusals are findings of their own class, whichever property met them"
BITPARITY_FAULTY_PLUGIN_REFUSES=1 "$bitparity" check --implementation "plugin:$faulty" --suite quant --format dynamic8-signed \
  --cases 1 --json "$work/refuses.json" >"$work/refuses.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "a plugin refusing every call passed (exit $code)"
python3 - "$work/refuses.json" <<'PYTHON' || fail "refusals were classed by the property that met them"
import json, sys
doc = json.load(open(sys.argv[1]))
classes = {f["class"] for f in doc["findings"]}
assert classes == {"refusal"}, classes
assert {"P2", "P3", "P7"} <= {f["property"].split()[0] for f in doc["findings"]}, doc["findings"]
PYTHON

echo "== bad plugins are refused before anything runs"
"$bitparity" check --implementation plugin:/nonexistent/libnothing.so >"$work/missing.txt" 2>&1
code=$?
cat "$work/missing.txt"
[ "$code" -eq 2 ] || fail "a missing plugin was not refused with exit 2 (exit $code)"
tail -n 1 "$work/missing.txt" | grep -q "^error: .*plugin /nonexistent/libnothing.so: cannot be loaded" || fail "the refusal does not say why"
echo "PASS"
