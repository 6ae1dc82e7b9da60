#!/usr/bin/env bash
# The bitsandbytes CPU adapter finds the user's library at run time: with a stand-in that exports
# bitsandbytes' entry points over bitparity's kernels (contiguous only, as bitsandbytes) the one
# finding is the strided cause, once per entry point, and the declared dequantize convention is
# listed and checked; with one that
# lacks the f16 and bf16 quantizers (as 0.49.2 does) it still loads, names what is missing once, and
# those rows are not applicable; without a library, or with one that is not bitsandbytes, the run
# is refused before any work with a line saying what to give.
set -uo pipefail
bitparity="$1"; adapter="$2"; standin="$3"; standin_f32="$4"; not_bitsandbytes="$5"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
check() { "$bitparity" check --implementation "plugin:$adapter" --suite quant "$@"; }

echo "== no library named, a missing one, one that is not bitsandbytes: exit 2, one line each"
refused() {  # expected-text, then the environment's value ('' for unset)
  local expected="$1" value="$2" code
  if [ -z "$value" ]; then
    env -u BITPARITY_BITSANDBYTES_LIBRARY "$bitparity" check --implementation "plugin:$adapter" --suite quant --cases 1 >"$work/refused.txt" 2>&1
  else
    BITPARITY_BITSANDBYTES_LIBRARY="$value" check --cases 1 >"$work/refused.txt" 2>&1
  fi
  code=$?
  [ "$code" -eq 2 ] && grep -q "^error: .*$expected" "$work/refused.txt" && [ "$(grep -c . "$work/refused.txt")" -eq 1 ] \
    || { cat "$work/refused.txt"; fail "BITPARITY_BITSANDBYTES_LIBRARY='$value': exit $code, expected 2 and '$expected'"; }
}
refused "BITPARITY_BITSANDBYTES_LIBRARY is not set; set it to the libbitsandbytes_cpu.so you built" ""
refused "/nonexistent/libbitsandbytes_cpu.so does not exist" /nonexistent/libbitsandbytes_cpu.so
mkfifo "$work/fifo"
refused "fifo is not a regular file" "$work/fifo"
refused "is a folder" "$work"
echo "not a library" > "$work/text.so"
refused "text.so cannot be loaded" "$work/text.so"
(cd "$(dirname "$standin")" && BITPARITY_BITSANDBYTES_LIBRARY="$(basename "$standin")" "$bitparity" check --implementation "plugin:$adapter" \
  --suite quant --property P7d --format dynamic8-signed --dtype f32 --cases 1 >"$work/relative.txt" 2>&1) ||
  { cat "$work/relative.txt"; fail "a library named relative to the working folder was not found there"; }
refused "exports none of bitsandbytes' CPU entry points" "$not_bitsandbytes"

# only_strided FILE: the run's findings are the contiguous-only library's strided cause, once per
# entry point, with the other rows it explains (P2 on other targets, P5 on strided cases) folded under it.
only_strided() {
  python3 - "$1" <<'PYTHON'
import json, sys
doc = json.load(open(sys.argv[1]))
findings = doc["findings"]
assert {f["class"] for f in findings} == {"strided-input difference"}, [(f["class"], f["counterexample"][:200]) for f in findings]
entries = [f["explanation"].split(" and its ")[1].split(" handed")[0] for f in findings]
assert sorted(entries) == sorted(set(entries)) and set(entries) <= {"quantize", "dequantize"}, entries
failed = [r for r in doc["results"] if "counterexample" in r]
assert sum(f["rows"] for f in findings) == len(failed), (sum(f["rows"] for f in findings), len(failed))
assert any(p.startswith("P5") for f in findings for p in f["folded"]), "no P5 row folded under the strided cause"
PYTHON
}

echo "== the whole stand-in: only the contiguous-only strided cause, once per entry point; nothing is said missing"
BITPARITY_BITSANDBYTES_LIBRARY="$standin" check --cases 2 --json "$work/whole.json" >"$work/whole.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/whole.txt"; fail "the stand-in (contiguous only) gave exit $code, not 1"; }
only_strided "$work/whole.json" || { cat "$work/whole.txt"; fail "the stand-in's findings are not its strided cause alone"; }
grep -q "^note:" "$work/whole.txt" && { cat "$work/whole.txt"; fail "a note on the whole stand-in"; }
strided_printed=$(grep -c '^\[strided-input difference\]' "$work/whole.txt")
strided_found=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$work/whole.json")
[ "$strided_printed" -eq "$strided_found" ] || fail "$strided_found strided causes found, $strided_printed printed" 
grep "^summary:" "$work/whole.txt"

echo "== the stand-in without f16/bf16 quantizers: it loads, the note names them once, their rows are not applicable"
BITPARITY_BITSANDBYTES_LIBRARY="$standin_f32" check --cases 2 --json "$work/f32.json" >"$work/f32.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/f32.txt"; fail "the stand-in without f16/bf16 quantizers gave exit $code, not 1"; }
only_strided "$work/f32.json" || { cat "$work/f32.txt"; fail "the f32-quantize stand-in's findings are not its strided cause alone"; }
[ "$(grep -c '^note: .*lacks cquantize_blockwise_cpu_fp16, cquantize_blockwise_cpu_bf16; those rows are not applicable$' "$work/f32.txt")" -eq 1 ] \
  || { cat "$work/f32.txt"; fail "the missing quantizers are not named exactly once"; }
BITPARITY_BITSANDBYTES_LIBRARY="$standin_f32" "$bitparity" fuzz --implementation "plugin:$adapter" --suite quant \
  --property P7d --format dynamic8-signed --budget 3s --jobs 2 --corpus "$work/corpus" >"$work/fuzz.txt" 2>&1
[ "$(grep -c '^note: .*lacks cquantize_blockwise_cpu_fp16' "$work/fuzz.txt")" -eq 1 ] \
  || { cat "$work/fuzz.txt"; fail "fuzz with two workers does not name the missing quantizers exactly once"; }
BITPARITY_BITSANDBYTES_LIBRARY="$standin_f32" check --property P7 --dtype f16 --cases 1 >"$work/nothing.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && [ "$(grep -c . "$work/nothing.txt")" -eq 1 ] \
  || { cat "$work/nothing.txt"; fail "a refusal (nothing applies) with a note pending is not one line, exit 2 (exit $code)"; }
python3 - "$work/whole.json" "$work/f32.json" <<'PYTHON' || fail "the rows are not what each library offers"
import json, sys
whole, f32 = (json.load(open(p))["results"] for p in sys.argv[1:])
def split(rows, kind):
    return [r for r in rows if r["property"].split()[0] in kind]
quantize_properties = {"P1", "P2", "P4", "P7"}  # each draws quantize calls of the row's dtype
for row in split(f32, quantize_properties):
    reason = row.get("not_applicable", "")
    if row["dtype"] in ("f16", "bf16") and row["format"] not in ("nf4", "fp4-positive-zero"):
        assert "does not quantize " + row["dtype"] in reason, row
ran_whole = {(r["property"], r["format"], r["dtype"]) for r in whole if "not_applicable" not in r}
ran_f32 = {(r["property"], r["format"], r["dtype"]) for r in f32 if "not_applicable" not in r}
assert all(r.get("not_applicable", "").find("does not quantize") < 0 for r in whole), "the whole stand-in declined a dtype"
assert ran_f32 < ran_whole, "the f32-only stand-in ran rows the whole one did not, or lost none"
assert any(d == "f32" for _, _, d in ran_f32), "no f32 row ran"
dequantize_f16 = [r for r in f32 if r["property"].split()[0] == "P7d" and r["dtype"] == "f16"]
assert any(r["format"] == "dynamic8-signed" and "not_applicable" not in r for r in dequantize_f16), "its f16 dequantize did not run"
PYTHON
echo "== the declared convention is listed, and checked: the stand-in truncating bf16 products is a finding"
python3 - "$work/whole.json" <<'PYTHON' || fail "the adapter's declared convention is not listed"
import json, sys
doc = json.load(open(sys.argv[1]))
assert [c["convention"] for c in doc.get("conventions", [])] == ["dequantize rounds the fp32 product"], doc.get("conventions")
PYTHON
grep -q "^conventions (declared by the library, checked as declared, not findings):" "$work/whole.txt" || fail "no conventions section"
BITPARITY_STANDIN_BF16_TRUNCATES=1 BITPARITY_BITSANDBYTES_LIBRARY="$standin" check --dtype bf16 --property P7d --cases 2 \
  --json "$work/truncates.json" >"$work/truncates.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/truncates.txt"; fail "bf16 by truncation under the declared convention: exit $code, not 1"; }
python3 - "$work/truncates.json" <<'PYTHON' || fail "the truncation is not a finding against the declared convention"
import json, sys
doc = json.load(open(sys.argv[1]))
kinds = {f["class"] for f in doc["findings"]}
assert kinds == {"dequantization not as declared"}, kinds
assert all("rounded as declared (to fp32, then to bf16)" in f["counterexample"] for f in doc["findings"])
PYTHON
echo "== rows shorter than a block, absmax indexed by row (bitsandbytes' AVX512 4-bit path): the cause is named"
BITPARITY_STANDIN_ABSMAX_BY_ROW=1 BITPARITY_BITSANDBYTES_LIBRARY="$standin" check --property P7d --format nf4 --dtype f32 \
  --block-size 128 --cases 10 --json "$work/by-row.json" >"$work/by-row.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || { cat "$work/by-row.txt"; fail "absmax indexed by row: exit $code, not 1"; }
python3 - "$work/by-row.json" <<'PYTHON' || { cat "$work/by-row.txt"; fail "the row-indexed absmax is not named as another block's absmax"; }
import json, sys
doc = json.load(open(sys.argv[1]))
assert [f["class"] for f in doc["findings"]] == ["another block's absmax"], [f["class"] for f in doc["findings"]]
assert "case: shape=[" in doc["findings"][0]["counterexample"], doc["findings"][0]["counterexample"]
PYTHON
echo "ok"
