#!/usr/bin/env bash
# `bitparity report` as a release manager runs it: a baseline, the unchanged build against it
# (the gate passes, every figure equal), a deliberately worse build (a mutant) against it (the
# gate fails and names the drift figures that grew), and an interrupted campaign that still
# leaves its partial report, whose gate does not pass. A baseline that is edited or thinned is refused,
# or does not pass: the gate vouches only for what it compared.
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
small=(--steps 25 --elements 48 --check-cases 2 --skip-sweeps)

echo "== the baseline"
"$bitparity" report --out "$work/base" "${small[@]}" >"$work/base.txt" 2>&1 || { cat "$work/base.txt"; fail "the baseline report failed"; }
for file in report.json report.md report.html; do [ -s "$work/base/$file" ] || fail "no $file"; done
python3 - "$work/base/report.json" <<'EOF' || fail "report.json lacks what the schema promises"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "bitparity.report/1" and r["complete"], "schema or complete"
for key in ("commit", "compiler", "cuda", "devices", "seed", "date"):
    assert key in r["build"], key
runs = r["drift"]
assert len(runs) == 66 and sum(x["eight_bit"] for x in runs) == 30, len(runs)
for run in runs:
    assert len(run["steps"]) == 25 and "median_rel_error" in run["steps"][0] and "summary" in run
assert r["check"]["summary"]["rows_run"] > 0 and r["gate"]["passed"] and r["gate"]["factor"] == 2
assert "deterministic" in r["gate"]["reason"]
EOF

echo "== the unchanged build passes the gate"
"$bitparity" report --out "$work/same" "${small[@]}" --baseline "$work/base/report.json" >"$work/same.txt" 2>&1
code=$?
grep "gate:" "$work/same.txt"
[ "$code" -eq 0 ] || fail "the unchanged build failed the gate (exit $code)"
grep -q "gate: passed (baseline .*, 0 regressions)" "$work/same.txt" || fail "no passing gate line"
# Each drift panel draws the baseline's curves faint beside today's, so a regression shows at a glance.
grep -q 'max, baseline' "$work/same/report.html" && grep -q 'stroke-opacity="0.3"' "$work/same/report.html" ||
  fail "report.html draws no baseline curves"
! grep -q 'stroke-opacity' "$work/base/report.html" || fail "a report without a baseline draws faint curves"

echo "== a worse build (Adam's bias correction off by one step) fails it"
"$bitparity" report --out "$work/worse" "${small[@]}" --baseline "$work/base/report.json" \
  --implementation mutant:adam-bias-correction-off-by-one >"$work/worse.txt" 2>&1
code=$?
grep -E "gate:|REGRESSION drift" "$work/worse.txt" | head -n 5
[ "$code" -eq 1 ] || fail "the worse build exited $code, expected 1"
python3 - "$work/worse/report.json" <<'EOF' || fail "the gate did not name Adam's drift"
import json, sys
r = json.load(open(sys.argv[1]))
drift = [g for g in r["gate"]["regressions"] if g["kind"] == "drift"]
assert drift and all(g["what"].startswith("adam/") for g in drift), [g["what"] for g in drift][:5]
assert any(g["ratio"] == "inf" or g["ratio"] > 2 for g in drift)
assert [run for run in r["drift"] if run["regressed"]], "no run marked regressed"
EOF
grep -q "FAILED" "$work/worse/report.md" || fail "report.md does not show the failed gate"
grep -q 'class="gate failed"' "$work/worse/report.html" || fail "report.html does not show the failed gate"

echo "== an interrupted campaign leaves a partial report in partial/, and a complete report beside it whole"
cp -r "$work/base" "$work/partial"
"$bitparity" report --out "$work/partial" --steps 2000 --elements 256 --check-cases 2 --skip-sweeps >"$work/partial.txt" 2>&1 &
pid=$!
sleep 3
kill -TERM "$pid"
wait "$pid"
code=$?
tail -n 2 "$work/partial.txt"
[ "$code" -eq 143 ] || fail "SIGTERM gave exit $code, expected 143"
for file in report.json report.md report.html; do
  cmp -s "$work/base/$file" "$work/partial/$file" || fail "the interrupted campaign changed the complete $file beside it"
done
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert not r["complete"] and r["drift"], "not a partial report"' \
  "$work/partial/partial/report.json" || fail "no partial report.json"
grep -q "partial" "$work/partial/partial/report.html" || fail "report.html does not say it is partial"
grep -q "^report: .*partial/report.json.*(partial: interrupted; a complete report in --out is left as it was)" "$work/partial.txt" ||
  fail "the interrupted campaign does not say where its partial report went"
# What did not run was not judged: an interrupted campaign never says its gate passed.
grep -q "^gate: NOT PASSED (partial campaign: interrupted)" "$work/partial.txt" || fail "the partial campaign's gate line does not say NOT PASSED"
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["gate"]; assert not g["passed"] and not g["complete"], g' \
  "$work/partial/partial/report.json" || fail "the partial report's gate passed"
grep -q "Gate: NOT PASSED" "$work/partial/partial/report.md" || fail "report.md does not show the partial gate"

echo "== a partial report is refused as a baseline"
"$bitparity" report --out "$work/x" "${small[@]}" --baseline "$work/partial/partial/report.json" >"$work/x.txt" 2>&1
code=$?
tail -n 1 "$work/x.txt"
[ "$code" -eq 2 ] || fail "a partial baseline gave exit $code, expected 2"
echo "== a baseline of other settings, or edited, is refused before the campaign"
refused() {  # refused PATTERN BASELINE [STEPS]
  local pattern=$1 baseline=$2 steps=${3:-25}
  "$bitparity" report --out "$work/y" --steps "$steps" --elements 48 --check-cases 2 --skip-sweeps --baseline "$baseline" >"$work/y.txt" 2>&1
  code=$?
  [ "$code" -eq 2 ] && tail -n 1 "$work/y.txt" | grep -q "^error: .*$pattern" || { cat "$work/y.txt"; fail "not refused with '$pattern' (exit $code)"; }
  [ ! -e "$work/y/report.json" ] || fail "the campaign ran before the refusal '$pattern'"
}
refused "was made with steps 25, this run has 24: the gate compares the same runs" "$work/base/report.json" 24
edited() {  # edited NAME PYTHON: a copy of the baseline with one edit
  python3 - "$work/base/report.json" "$work/$1.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
EOF
}
edited text-figure 'r["drift"][0]["summary"]["max"]["max_abs_error"] = "x"'
refused "drift run adam/f32 max 'max_abs_error' is \"x\", not a figure of at least 0" "$work/text-figure.json"
edited null-figure 'r["check"]["rows"][0]["ill_conditioned"] = None'
refused "'ill_conditioned' is null, not a count" "$work/null-figure.json"
# Each of these ended in an internal error (exit 5), or was taken for something else.
edited complete-text 'r["complete"] = "yes"'
refused "'complete' is \"yes\", not true or false" "$work/complete-text.json"
edited fractional-count 'r["check"]["rows"][0]["ill_conditioned"] = 2.5'
refused "'ill_conditioned' is 2.5, not a count" "$work/fractional-count.json"
edited unnamed-run 'r["drift"][0]["optimizer"] = 7'
refused "a drift run has no text 'optimizer'" "$work/unnamed-run.json"
edited unnamed-row 'r["check"]["rows"][0]["format"] = None'
refused "a check row has no text 'format'" "$work/unnamed-row.json"
# The check rows' case count decides their figures as the steps decide the drift's.
"$bitparity" report --out "$work/y" --steps 25 --elements 48 --check-cases 3 --skip-sweeps --baseline "$work/base/report.json" >"$work/y.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && grep -q "^error: .*was made with check_cases 2, this run has 3" "$work/y.txt" || { cat "$work/y.txt"; fail "other --check-cases: exit $code"; }
edited drift-text 'r["drift"] = "x"'
refused "'drift' is not a list of runs" "$work/drift-text.json"
edited no-summary 'del r["drift"][3]["summary"]'
refused "a drift run has no 'summary'" "$work/no-summary.json"
# A schema that is a number ended in an internal error (exit 5, nlohmann's type_error).
edited numeric-schema 'r["schema"] = 1'
refused "is not a bitparity report .schema bitparity.report/1" "$work/numeric-schema.json"
edited numeric-run-key 'r["drift"][0]["summary"]["max"] = {"max_abs_error": {"a": 1}}'
refused "drift run adam/f32 max 'max_abs_error' is {\"a\":1}, not a figure" "$work/numeric-run-key.json"
# A run or row given twice would be compared with its last copy, which an edit can loosen.
edited duplicate-run 'r["drift"].append(dict(r["drift"][0]))'
refused "drift run adam/f32 appears twice" "$work/duplicate-run.json"
edited duplicate-row 'r["check"]["rows"].append(dict(r["check"]["rows"][0]))'
refused "check row .* appears twice" "$work/duplicate-row.json"
# Figures the gate does not compare are still part of the file: an edited one is refused too.
edited negative-ratio 'r["check"]["rows"][0]["max_error_over_bound"] = -0.5'
refused "'max_error_over_bound' is -0.5, not a figure of at least 0" "$work/negative-ratio.json"
edited text-cases 'r["check"]["rows"][0]["cases"] = "7"'
refused "'cases' is \"7\", not a count" "$work/text-cases.json"
# A row's time below 0, or a passing row beyond its bound, was accepted.
edited negative-seconds 'r["check"]["rows"][0]["seconds"] = -5'
refused "'seconds' is -5, not a figure of at least 0" "$work/negative-seconds.json"
edited passing-beyond-bound 'row = r["check"]["rows"][0]; row["violations"] = 0; row["max_error_over_bound"] = 1.5'
refused "check row .* has no violations and an error of 1.5 times its bound" "$work/passing-beyond-bound.json"
# A baseline naming a device it holds no parity runs for passed the gate without a word.
edited claimed-device 'r["settings"]["devices"] = ["cuda:0"]; r["device_parity"]["runs"] = []'
refused "its settings name device cuda:0, and 'device_parity' holds 0 runs on it, not one per drift run" "$work/claimed-device.json"
edited other-property-id 'r["check"]["rows"][0]["property_id"] = "P99"'
refused "'property_id' \"P99\" is not its property" "$work/other-property-id.json"
edited no-steps 'del r["drift"][1]["steps"]'
refused "drift run .* has no list of 'steps'" "$work/no-steps.json"
# A drift run's steps and summary agree: steps cut, a step's count made negative, or a summary
# loosened, were accepted (the gate then compared the edit).
edited cut-steps 'r["drift"][0]["steps"] = r["drift"][0]["steps"][:1]'
refused "drift run adam/f32 has 1 steps, and the report was made with 25" "$work/cut-steps.json"
edited negative-nonfinite 'r["drift"][0]["steps"][0]["nonfinite"] = -5'
refused "drift run adam/f32 step 'nonfinite' is -5, not a count" "$work/negative-nonfinite.json"
edited nonfinite-summary 'r["drift"][0]["summary"]["max"]["nonfinite"] = 3'
refused "drift run adam/f32: its summary's 'nonfinite' is not its steps'" "$work/nonfinite-summary.json"
edited histogram 'r["drift"][0]["steps"][0]["ulp_histogram"] = [1, 2]'
refused "drift run adam/f32: step 1's 'ulp_histogram' is not 6 counts" "$work/histogram.json"
edited loosened 'r["drift"][2]["summary"]["max"]["max_rel_error"] *= 4'
refused "drift run .*: its summary's 'max_rel_error' is not its steps'" "$work/loosened.json"
# nlohmann keeps the last of two equal keys: a file holding one twice is refused, naming it.
python3 - "$work/base/report.json" "$work/twin-key.json" <<'EOF'
import sys
text = open(sys.argv[1]).read()
assert '"complete":' in text
open(sys.argv[2], "w").write(text.replace('"complete":', '"complete": false, "complete":', 1))
EOF
refused "key 'complete' appears twice in one object; keep one" "$work/twin-key.json"
echo "== a thinned baseline does not pass the gate: what it lacks was not compared"
# A run made with other hyperparameters passed the gate as if it were the same run.
edited thinned 'del r["drift"][5]; del r["drift"][0]["summary"]["max"]["max_ulps"]; r["check"]["rows"] = r["check"]["rows"][1:]; r["drift"][1]["hyperparameters"] = "edited"'
"$bitparity" report --out "$work/thin" "${small[@]}" --baseline "$work/thinned.json" >"$work/thin.txt" 2>&1
code=$?
grep "gate:" "$work/thin.txt"
[ "$code" -eq 1 ] || fail "a thinned baseline gave exit $code, expected 1"
grep -q "^gate: NOT PASSED (4 runs, rows or figures not matched by the baseline)" "$work/thin.txt" || fail "the thinned baseline's gate line"
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["gate"]; assert not g["passed"] and len(g["unmatched"]) == 4 and any("made with hyperparameters" in u for u in g["unmatched"]), g["unmatched"]' \
  "$work/thin/report.json" || fail "the thinned baseline's gate passed, or does not list what it lacks"
# What was not compared is said once, as a count over a folded list, not one grey line each.
grep -q '<details class="note"><summary>4 runs, rows or figures were not compared' "$work/thin/report.html" ||
  fail "report.html does not fold the unmatched list under one count"
[ "$(grep -o '<li>' "$work/thin/report.html" | wc -l)" -eq 4 ] || fail "the folded list does not hold the 4 unmatched"
echo "report gate: passed"
