#!/usr/bin/env bash
# Behaviour of the command line that one invocation cannot show: atomic results, clean interrupts,
# a required GPU, position-free row seeds. Usage: cli_contract.sh BITPARITY CASE (run by ctest).
set -u
bin="$1"
case_name="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
has_gpu() { "$bin" list | grep -q '^  cuda:'; }
# interrupted_run SIGNAL AFTER_SECONDS EXPECTED_EXIT ARGS...: the run, signalled, ends with that exit
# (its output in log.txt).
interrupted_run() {
  local signal=$1 after=$2 expected=$3
  shift 3
  "$bin" "$@" >log.txt 2>&1 &
  local pid=$!
  sleep "$after"
  kill -"$signal" "$pid"
  wait "$pid"
  local code=$?
  tail -4 log.txt
  [ "$code" -eq "$expected" ] || fail "SIG$signal: exit $code, expected $expected"
}

case "$case_name" in
  full-disk-keeps-previous-file)
    "$bin" check --suite quant --format nf4 --dtype bf16 --cases 1 --json out.json >/dev/null || fail "first run"
    cp out.json before.json
    # A file-size limit makes every write past 1 KiB fail (EFBIG), as a full disk does; SIGXFSZ is
    # left at its default, which kills (bitparity ignores it). The output goes through a pipe,
    # which the limit does not cover.
    (ulimit -f 1; exec "$bin" check --suite quant --format nf4 --dtype bf16 --cases 1 --json out.json) 2>&1 | cat >log.txt
    code=${PIPESTATUS[0]}
    cat log.txt
    [ "$code" -eq 3 ] || fail "exit $code, expected 3"
    grep -q "^error: cannot write 'out.json'" log.txt || fail "no one-line write error"
    cmp -s out.json before.json || fail "the previous results file was changed"
    [ -z "$(ls -A | grep '\.tmp\.')" ] || fail "a temporary file was left behind"
    ;;
  results-never-replace-inputs)
    # A results path that is a link keeps the link and replaces the file it points to (the rename
    # replaced the link itself, /dev/stdout included).
    "$bin" check --suite quant --format nf4 --property P7 --cases 1 --json real.json >/dev/null || fail "first run"
    ln -s real.json link.json
    "$bin" check --suite quant --format nf4 --property P7 --cases 2 --json link.json >/dev/null || fail "run through the link"
    [ -L link.json ] && [ "$(readlink link.json)" = real.json ] || fail "the link was replaced"
    grep -q '"cases": 16,' real.json || fail "the file the link points to was not updated"
    # An input of the same run is never the results file, nor the folder of them (each exited 0
    # and destroyed the input: a case file, a checkpoint, a fuzz state, a report's baseline).
    refused() {  # refused WHAT FILE COMMAND...: exit 2, one line naming the input, FILE unchanged
      local what=$1 file=$2; shift 2
      local before; before=$(cksum <"$file")
      "$bin" "$@" >out.txt 2>&1
      local code=$?
      [ "$code" -eq 2 ] && [ "$(wc -l <out.txt)" -eq 1 ] && grep -q "^error: .*$what" out.txt ||
        { cat out.txt; fail "$* : exit $code, not one line naming $what"; }
      [ "$(cksum <"$file")" = "$before" ] || fail "$*: $file changed"
    }
    cp real.json case.json
    refused "is the case path 'case.json', which the results would replace" case.json replay case.json --json case.json
    mkdir -p corpus/cases && cp real.json corpus/cases/a.json
    refused "lies inside the case path 'corpus'" corpus/cases/a.json replay corpus --json corpus/cases/out.json
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 3}' >corpus/fuzz-state.json
    refused "lies inside the corpus 'corpus'" corpus/fuzz-state.json fuzz --budget 2s --corpus corpus --json corpus/fuzz-state.json
    [ ! -e fresh ] || fail "setup"
    "$bin" fuzz --budget 2s --corpus fresh --json fresh/summary.json >/dev/null 2>&1
    [ ! -e fresh ] || fail "a refused fuzz made its corpus folder"
    cp real.json k.safetensors
    refused "is the checkpoint 'k.safetensors'" k.safetensors checkpoint inspect k.safetensors --json k.safetensors
    mkdir -p rep && cp real.json rep/report.json
    refused "is the --baseline 'rep/report.json'" rep/report.json report --out rep --baseline rep/report.json
    echo "ok: the link kept, five inputs refused as results"
    ;;
  sigterm-writes-complete-rows)
    interrupted_run TERM 5 143 check --seconds 120 --json out.json
    grep -q '"complete": false' out.json || fail "results not marked incomplete"
    grep -q '"interrupted": "SIGTERM"' out.json || fail "results do not name the signal"
    grep -q "interrupted by SIGTERM" log.txt || fail "no interruption line"
    ;;
  sighup-writes-complete-rows)
    # A closed terminal (SIGHUP) ended the run at once: no line, no rows, exit 129. It now stops as
    # SIGTERM does.
    interrupted_run HUP 5 129 check --seconds 120 --json out.json
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and d["interrupted"] == "SIGHUP" and d["results"], d["summary"]' out.json ||
      fail "the rows finished before SIGHUP are not in out.json"
    grep -q "interrupted by SIGHUP" log.txt || fail "no interruption line"
    # Under nohup SIGHUP stays ignored: the run goes on.
    nohup "$bin" check --property P7 --format nf4 --dtype f32 --cases 400 --json kept.json >log.txt 2>&1 &
    pid=$!
    sleep 2
    kill -HUP "$pid"
    wait "$pid"
    code=$?
    [ "$code" -eq 0 ] && python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["complete"] is True' kept.json ||
      { cat log.txt; fail "under nohup, SIGHUP ended the run (exit $code)"; }
    ;;
  double-signal-is-one-request)
    # `timeout` and a runner's kill signal a process and then its group: one request, two signals
    # microseconds apart. The second had killed the run outright, writing nothing.
    "$bin" check --seconds 120 --json out.json >log.txt 2>&1 &
    pid=$!
    sleep 3
    kill -INT "$pid"; kill -INT "$pid"
    wait "$pid"
    code=$?
    tail -3 log.txt
    [ "$code" -eq 130 ] || fail "two SIGINTs at once: exit $code, expected 130"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and d["interrupted"] == "SIGINT" and d["results"], d["summary"]' out.json ||
      fail "the rows finished before the signals are not in out.json"
    ;;
  report-into-new-folders)
    # --out and its partial/ folder are made when the run starts writing (a probe's folder is not
    # kept): a new --out, and an interrupted campaign's partial/, had failed on their lock file.
    "$bin" report --out new/out --steps 2 --elements 4 --check-cases 1 --skip-sweeps --device cpu >log.txt 2>&1 ||
      { cat log.txt; fail "report into a new folder: exit $?"; }
    [ -s new/out/report.json ] && [ -s new/out/report.html ] || fail "no report in the new folder"
    interrupted_run INT 3 130 report --out new/cut --steps 3000 --elements 64 --check-cases 1 --skip-sweeps --device cpu
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["complete"] is False' new/cut/partial/report.json ||
      fail "the interrupted campaign left no partial report in new/cut/partial"
    ;;
  sigterm-keeps-earlier-complete-result)
    # An interrupted run replaced the complete result an earlier run left at its --json path; its
    # partial rows now go beside it (out.partial.json), named by the results line.
    "$bin" check --suite quant --format nf4 --property P7 --dtype f32 --cases 1 --json out.json >/dev/null || fail "first run"
    cp out.json before.json
    interrupted_run TERM 4 143 check --suite optim32 --cases 200 --json out.json
    cmp -s out.json before.json || fail "the earlier complete result was replaced"
    grep -q "^results: out.partial.json" log.txt || fail "the results line does not name out.partial.json"
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["complete"] is False' out.partial.json || fail "no partial result beside it"
    # A complete run still replaces a complete result, and a partial one where no complete one was.
    "$bin" drift --optimizer sgd --steps 2 --elements 8 --json out.json >/dev/null || fail "a complete run after it"
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["schema"].startswith("bitparity.drift")' out.json || fail "not replaced by a complete run"
    interrupted_run TERM 3 143 drift --optimizer adam --dtype f32 --elements 64 --steps 200000 --json fresh.json
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["complete"] is False' fresh.json || fail "no partial result at a new path"
    ;;
  sigint-stops-sharded-rows)
    # The runner over ranks checks for a signal before each row, on every rank alike (it ran on to
    # the end and exited 0).
    interrupted_run INT 4 130 sharded --cases 50 --json out.json
    grep -q "interrupted by SIGINT: [0-9]* rows not run" log.txt || fail "the summary does not say it was interrupted"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and d["interrupted"] == "SIGINT" and d["results"], d["summary"]' out.json ||
      fail "the JSON is not marked incomplete, or holds no row"
    ;;
  sigterm-marks-partial-drift-run)
    # A drift run stopped between its steps is not counted as done (the summary said "1 of 1 runs"
    # and its JSON entry had no mark).
    interrupted_run TERM 3 143 drift --optimizer adam --dtype f32 --elements 64 --steps 200000 --json out.json
    grep -q "^summary: 0 of 1 runs complete, .*interrupted by SIGTERM (adam/f32 stopped after step [0-9]* of 200000)" log.txt ||
      fail "the summary does not say the run was cut short"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and d["drift"][0]["complete"] is False, d["drift"][0].keys()' out.json ||
      fail "the cut-short run is not marked incomplete in the JSON"
    ;;
  sigint-stops-sharded-benchmark)
    # --benchmark too (it timed every row, then exited 0).
    interrupted_run INT 4 130 sharded --benchmark --optimizer adam --optimizer sgd --optimizer lion --json out.json
    grep -q "interrupted by SIGINT: [0-9]* rows not run" log.txt || fail "the benchmark does not say it was interrupted"
    grep -q "^results: out.json" log.txt || fail "no results line names the file"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and d["interrupted"] == "SIGINT"' out.json ||
      fail "the benchmark JSON is not marked incomplete"
    ;;
  require-gpu-fails-without-one)
    if has_gpu; then echo "skipped: a GPU is present, nothing to show"; exit 77; fi
    "$bin" check --suite conversions --require-gpu >log.txt 2>&1
    code=$?
    cat log.txt
    [ "$code" -eq 4 ] || fail "--require-gpu: exit $code, expected 4"
    BITPARITY_REQUIRE_GPU=1 "$bin" drift --steps 1 >log.txt 2>&1
    code=$?
    cat log.txt
    [ "$code" -eq 4 ] || fail "BITPARITY_REQUIRE_GPU=1: exit $code, expected 4"
    # Naming the GPU that is missing is the same failure (check and fuzz said exit 2, drift 4).
    for command in "check --suite quant --format nf4 --cases 1" "fuzz --budget 1s --corpus gpu-corpus --suite quant --format nf4" \
                   "drift --steps 1"; do
      # shellcheck disable=SC2086
      "$bin" $command --device cuda:0 --require-gpu >log.txt 2>&1
      code=$?
      [ "$code" -eq 4 ] || { cat log.txt; fail "$command --device cuda:0 --require-gpu: exit $code, expected 4"; }
    done
    ;;
  require-gpu-reads-yes-and-no)
    # GPU CI's "false" must not require a GPU, and a typo must not silently skip the GPU rows.
    BITPARITY_REQUIRE_GPU=maybe "$bin" drift --steps 1 >out.txt 2>err.txt
    code=$?
    cat err.txt
    [ "$code" -eq 2 ] || fail "BITPARITY_REQUIRE_GPU=maybe: exit $code, expected 2"
    [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^error: BITPARITY_REQUIRE_GPU='maybe' is neither yes nor no" err.txt ||
      fail "BITPARITY_REQUIRE_GPU=maybe: no one-line error naming the value"
    [ ! -s out.txt ] || fail "BITPARITY_REQUIRE_GPU=maybe: work started before the refusal"
    if has_gpu; then
      # With a usable GPU every value, yes or no, runs: none is refused.
      for value in '' 0 false No OFF 1 TRUE yes On; do
        BITPARITY_REQUIRE_GPU=$value "$bin" drift --steps 1 >/dev/null 2>&1 || fail "BITPARITY_REQUIRE_GPU='$value' with a GPU: exit $?"
      done
      echo "ok: with a GPU every yes and no value runs; maybe refused"
      exit 0
    fi
    for value in '' 0 false No OFF; do
      BITPARITY_REQUIRE_GPU=$value "$bin" drift --steps 1 >/dev/null 2>&1
      code=$?
      [ "$code" -eq 0 ] || fail "BITPARITY_REQUIRE_GPU='$value': exit $code, expected 0 (no GPU required)"
    done
    for value in 1 TRUE yes On; do
      BITPARITY_REQUIRE_GPU=$value "$bin" drift --steps 1 >/dev/null 2>&1
      code=$?
      [ "$code" -eq 4 ] || fail "BITPARITY_REQUIRE_GPU='$value': exit $code, expected 4 (a GPU required)"
    done
    echo "ok: no for '' 0 false No OFF, yes for 1 TRUE yes On, maybe refused"
    ;;
  no-gpu-is-announced)
    if has_gpu; then echo "skipped: a GPU is present, nothing to show"; exit 77; fi
    "$bin" check --device all --suite optim32 --optimizer sgd --dtype f32 --cases 1 >out.txt 2>err.txt || fail "check failed"
    cat err.txt out.txt
    grep -q "^notice: no GPU" err.txt || fail "no notice on stderr"
    grep -Eq "[1-9][0-9]* skipped \(no GPU\)" out.txt || fail "no skipped count in the summary"
    ;;
  row-seed-independent-of-selection)
    "$bin" check --suite optim32 --dtype f32 --cases 4 >all.txt || fail "full run"
    "$bin" check --suite optim32 --optimizer lars --dtype f32 --cases 4 >one.txt || fail "filtered run"
    grep '^P[0-9a-z]* [a-z-]* *lars ' all.txt >a.txt
    grep '^P[0-9a-z]* [a-z-]* *lars ' one.txt >b.txt
    cat b.txt
    [ -s b.txt ] && cmp -s a.txt b.txt || fail "the lars rows differ between the full and the filtered run"
    ;;
  state-plan-allocates-nothing)
    # 10^12 elements of 8-bit states would need 2 TB: planned, not allocated.
    "$bin" state-plan --optimizer adam --size 1000000000000 >out.txt || fail "state-plan refused"
    cat out.txt
    grep -q "8-bit" out.txt || fail "no path printed"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
