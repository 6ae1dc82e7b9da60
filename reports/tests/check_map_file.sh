#!/usr/bin/env bash
# `bitparity check --map FILE` and `fuzz --map FILE` as a maintainer uses them: a map of their own (here an 8-bit and a
# 4-bit ramp written as JSON bit patterns) is registered, listed by name in the rows, every quant
# property runs on it, and the 8-bit optimizers run with the 8-bit one as their signed states' map;
# a file that is not a map is refused before anything runs.
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
python3 - "$work/rows.json" <<'PYTHON' || fail "the rows do not cover both maps, and the 8-bit optimizers with ramp8"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert all(r["violations"] == 0 and "counterexample" not in r for r in rows)
quant = [r for r in rows if r["suite"] == "quant"]
assert {r["format"] for r in quant} == {"ramp8", "ramp4"}, {r["format"] for r in quant}
assert {r["property"].split()[0] for r in quant} >= {"P2", "P3", "P4", "P7", "P7d", "P9"}
# ramp8 has negative values: the 8-bit optimizers' signed states (momenta) take it, the others keep theirs.
optim8 = [r for r in rows if r["suite"] == "optim8"]
assert optim8 and {r["suite"] for r in rows} == {"quant", "optim8"}, {r["suite"] for r in rows}
adam = [r for r in optim8 if r["format"] == "adam"]
assert adam and all(r["state_maps"] == ["ramp8", "dynamic8-unsigned"] for r in adam), adam[0].get("state_maps")
assert {r["property"].split()[0] for r in optim8} >= {"P1q", "P2q", "P3q", "P4q", "P9q"}
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
maps = {m["name"]: m for m in c["code_maps"]}
assert c["entry"] == "ramp4" and len(maps["ramp4"]["values"]) == 16, c.get("code_maps")
PYTHON
"$bitparity" replay "$case_file" >"$work/replay.txt" 2>&1 || { cat "$work/replay.txt"; fail "the case no longer kills its mutant"; }
"$bitparity" replay --implementation cpu "$case_file" >"$work/replay-cpu.txt" 2>&1 \
  || { cat "$work/replay-cpu.txt"; fail "the case does not hold on cpu"; }
python3 - "$case_file" "$work/clash.json" <<'PYTHON'
import json, sys
c = json.load(open(sys.argv[1]))
ramp4 = [m for m in c["code_maps"] if m["name"] == "ramp4"][0]
ramp4["values"][0] = "0xbf700000"  # another map under the same name
c.pop("fingerprint")
c["entry"] = ramp4["name"] = "nf4"
json.dump(c, open(sys.argv[2], "w"))
PYTHON
"$bitparity" replay "$work/clash.json" >"$work/clash.txt" 2>&1
code=$?
cat "$work/clash.txt"
[ "$code" -eq 2 ] || fail "a case whose map clashes with nf4 was not refused with exit 2 (exit $code)"
grep -q "its code map 'nf4' has other values than bitparity's built-in map of that name" "$work/clash.txt" || fail "the clash is not explained"
# Two cases carrying different maps of one name: one run knows one map per name, and the line said
# only "give the new map another name", which no one can do to a saved case.
mkdir -p "$work/two-maps"
cp "$case_file" "$work/two-maps/a.json"
python3 - "$case_file" "$work/two-maps/b.json" <<'PYTHON'
import json, sys
c = json.load(open(sys.argv[1]))
[m for m in c["code_maps"] if m["name"] == "ramp4"][0]["values"][0] = "0xbf700000"
c.pop("fingerprint")
json.dump(c, open(sys.argv[2], "w"))
PYTHON
"$bitparity" replay "$work/two-maps" >"$work/two-maps.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "b.json: its code map 'ramp4' has other values than the map of that name already read in this run .*replay the two in separate runs" "$work/two-maps.txt" ||
  { cat "$work/two-maps.txt"; fail "two cases with different maps of one name: exit $code"; }
# The fingerprint covers the carried map: one value edited, the fingerprint kept, replayed as a kill.
python3 - "$case_file" "$work/edited-map.json" <<'PYTHON'
import json, sys
c = json.load(open(sys.argv[1]))
[m for m in c["code_maps"] if m["name"] == "ramp4"][0]["values"][5] = "0xbe7fffff"  # -0.25 one ulp nearer zero
json.dump(c, open(sys.argv[2], "w"))
PYTHON
"$bitparity" replay "$work/edited-map.json" >"$work/edited-map.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "^error: .*the fingerprint .* does not match the case" "$work/edited-map.txt" ||
  { cat "$work/edited-map.txt"; fail "a case whose carried map was edited under its fingerprint gave exit $code"; }

echo "== fuzz an 8-bit optimizer whose momenta take the map: the case names it and carries it (and no unused map)"
"$bitparity" fuzz --suite quant optim8 --optimizer adam --map "$work/ramp8.json" --map "$work/four.json" \
  --implementation mutant:optim8-round-toward-zero \
  --budget 60s --jobs 2 --stop-on-failure --corpus "$work/corpus8" --log-every 3600 >"$work/fuzz8.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/fuzz8.txt"; fail "fuzzing the round-toward-zero mutant with ramp8 states did not fail (exit $code)"; }
case8=$(ls "$work"/corpus8/cases/*.json | head -1)
python3 - "$case8" <<'PYTHON' || fail "the 8-bit case does not name and carry ramp8"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["inputs"]["case"]["state_maps"] == ["ramp8", "dynamic8-unsigned"], c["inputs"]["case"].get("state_maps")
assert [m["name"] for m in c["code_maps"]] == ["ramp8"], c.get("code_maps")
PYTHON
"$bitparity" replay "$case8" >"$work/replay8.txt" 2>&1 || { cat "$work/replay8.txt"; fail "the 8-bit case no longer kills its mutant"; }
"$bitparity" replay --implementation cpu "$case8" >"$work/replay8-cpu.txt" 2>&1 \
  || { cat "$work/replay8-cpu.txt"; fail "the 8-bit case does not hold on cpu"; }

echo '[1, 2, 3]' >"$work/short.json"
"$bitparity" check --map "$work/short.json" --json "$work/none.json" >"$work/refused.txt" 2>&1
code=$?
cat "$work/refused.txt"
[ "$code" -eq 2 ] || fail "a 3-value map was not refused with exit 2 (exit $code)"
tail -n 1 "$work/refused.txt" | grep -q "^error: .*holds 3 values" || fail "the refusal does not say what is wrong"
[ ! -e "$work/none.json" ] || fail "a refused run wrote its results file"
# bitsandbytes' unsigned linear map (256 values i/255, 16 midpoints in an eighth of a binade) was
# refused by a search window of 16; a map denser than the window is refused saying where and what
# to change (it named an internal bucket number).
python3 - "$work" <<'PYTHON' || fail "could not write the linear maps"
import json, struct, sys
def bits(x): return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]
json.dump({"name": "linear_unsigned", "bits": 8, "values": [bits(i / 255.0) for i in range(256)]}, open(sys.argv[1] + "/linear.json", "w"))
dense = [0.0] + [0.5 + i * 2**-12 for i in range(40)] + [0.6 + i * 0.0015 for i in range(215)]
json.dump({"name": "dense", "bits": 8, "values": [bits(v) for v in dense]}, open(sys.argv[1] + "/dense.json", "w"))
PYTHON
"$bitparity" check --suite quant --map "$work/linear.json" --cases 2 >"$work/linear.txt" 2>&1 || { cat "$work/linear.txt"; fail "the unsigned linear map"; }
# One map given twice under two paths ran as one (the second silently merged into the first).
"$bitparity" check --suite quant --map "$work/linear.json" --map "$work/./linear.json" --cases 1 >"$work/twice.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "^error: .*are the same map 'linear_unsigned'. give it once" "$work/twice.txt" || { cat "$work/twice.txt"; fail "one map twice: exit $code"; }
"$bitparity" check --suite quant --map "$work/dense.json" --cases 1 >"$work/dense.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "^error: code map dense: 40 midpoints between its values lie in \[0.5, 0.56249994\].*space the values wider" "$work/dense.txt" ||
  { cat "$work/dense.txt"; fail "a map denser than the window: exit $code"; }
echo "PASS"
