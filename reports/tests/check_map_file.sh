#!/usr/bin/env bash
# `bitparity check --map FILE` and `fuzz --map FILE` as a maintainer uses them: a map of their own (here an 8-bit and a
# 4-bit ramp written as JSON bit patterns) is registered, listed by name in the rows, and every
# quant property runs on it; a file that is not a map is refused before anything runs.
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python3 - "$work" <<'PYTHON' || fail "could not write the test maps"
import json, struct, sys
def bits(x): return struct.unpack("<I", struct.pack("<f", x))[0]
json.dump([bits((i - 127) / 128.0) for i in range(256)], open(sys.argv[1] + "/ramp8.json", "w"))
json.dump({"name": "ramp4", "values": ["0x%08x" % bits((i - 7) / 8.0) for i in range(16)]}, open(sys.argv[1] + "/four.json", "w"))
PYTHON
"$bitparity" check --map "$work/ramp8.json" --map "$work/four.json" --cases 2 --json "$work/rows.json" >"$work/out.txt" 2>&1 \
  || { cat "$work/out.txt"; fail "check on the maps failed"; }
cat "$work/out.txt"
python3 - "$work/rows.json" <<'PYTHON' || fail "the rows do not cover both maps"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
maps = {r["format"] for r in rows}
assert maps == {"ramp8", "ramp4"}, maps
assert all(r["violations"] == 0 and "counterexample" not in r for r in rows)
properties = {r["property"].split()[0] for r in rows}
assert properties >= {"P2", "P3", "P4", "P7", "P9"}, properties
PYTHON
echo "== fuzz on the map: a failure's case carries the map, and replays in a fresh process"
"$bitparity" fuzz --map "$work/four.json" --implementation mutant:midpoint-one-ulp-high --budget 60s --jobs 2 \
  --stop-on-failure --corpus "$work/corpus" --log-every 3600 >"$work/fuzz.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/fuzz.txt"; fail "fuzzing the one-ulp mutant on ramp4 did not fail (exit $code)"; }
case_file=$(ls "$work"/corpus/cases/*ramp4*.json | head -1)
[ -n "$case_file" ] || fail "no saved case names ramp4"
python3 - "$case_file" <<'PYTHON' || fail "the case does not carry the map"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["entry"] == "ramp4" and c["code_map"]["name"] == "ramp4" and len(c["code_map"]["values"]) == 16, c.get("code_map")
PYTHON
"$bitparity" replay "$case_file" >"$work/replay.txt" 2>&1 || { cat "$work/replay.txt"; fail "the case no longer kills its mutant"; }
"$bitparity" replay --implementation cpu "$case_file" >"$work/replay-cpu.txt" 2>&1 \
  || { cat "$work/replay-cpu.txt"; fail "the case does not hold on cpu"; }
python3 - "$case_file" "$work/clash.json" <<'PYTHON'
import json, sys
c = json.load(open(sys.argv[1]))
c["code_map"]["values"][0] = "0xbf700000"  # another map under the same name
c.pop("fingerprint")
c["entry"] = c["code_map"]["name"] = "nf4"
json.dump(c, open(sys.argv[2], "w"))
PYTHON
"$bitparity" replay "$work/clash.json" >"$work/clash.txt" 2>&1
code=$?
cat "$work/clash.txt"
[ "$code" -eq 2 ] || fail "a case whose map clashes with nf4 was not refused with exit 2 (exit $code)"
grep -q "already registered with other values" "$work/clash.txt" || fail "the clash is not explained"

echo '[1, 2, 3]' >"$work/short.json"
"$bitparity" check --map "$work/short.json" --json "$work/none.json" >"$work/refused.txt" 2>&1
code=$?
cat "$work/refused.txt"
[ "$code" -eq 2 ] || fail "a 3-value map was not refused with exit 2 (exit $code)"
tail -n 1 "$work/refused.txt" | grep -q "^error: .*holds 3 values" || fail "the refusal does not say what is wrong"
[ ! -e "$work/none.json" ] || fail "a refused run wrote its results file"
echo "PASS"
