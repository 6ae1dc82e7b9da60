#!/bin/sh
# Multi-rank tests through mpirun (oversubscribed: W may exceed the cores; as root where needed).
#   ranks.sh BITPARITY parity W SEED     P6 (seed 002 included) and P2r (seed 000) over every optimizer,
#                                        format, dtype, layout and states
#   ranks.sh BITPARITY mutant W NAME     the driver fault NAME, or the implementation mutant:NAME on
#                                        every rank, must be killed
#   ranks.sh BITPARITY mixed W DEVICE    rank 0 on DEVICE (cuda:0), the others on cpu: bitwise the
#                                        all-CPU results; exit 77 (skipped) without a GPU
#   ranks.sh BITPARITY communicator W NAME  P6 and P2r over the communicator NAME; nccl puts rank r on
#                                        cuda:r and is skipped (exit 77) with fewer than W GPUs
#   ranks.sh BITPARITY nccl-refusal W cpu  CPU ranks on NCCL are refused with exit 2 and a reason
#   ranks.sh BITPARITY refusals W -      bad input under mpirun is said once (rank 0), not once a rank,
#                                        and soon; a refusal only rank 1 reaches is still said
#   ranks.sh BITPARITY benchmark W FILE  --benchmark runs every layout and writes its JSON (no timing is judged)
#   ranks.sh BITPARITY json W FILE       the JSON rows carry world_size, layout and ranks
#   ranks.sh BITPARITY resume W OPTIMIZER  P11 for every (W, W') in 1..W, OPTIMIZER (or "all"), every
#                                        dtype, layout and states
#   ranks.sh BITPARITY resume-device W DEVICE  P11 saving on cpu and resuming on DEVICE (cuda:0), and
#                                        the other way round; exit 77 (skipped) without the GPU
#   ranks.sh BITPARITY maps W MAPS       P6 and P11 with 8-bit states on the maps MAPS (signed,unsigned)
#                                        instead of the optimizers' own, every world pair; a loader
#                                        that keeps its own maps (checkpoint-maps-not-restored) is killed
#   ranks.sh BITPARITY check-suite W SUITE  `check --suite SUITE` (storage, resume, sharded) over W ranks
#   ranks.sh BITPARITY checkpoint W DIR  checkpoint inspect: a good file passes, a flipped byte fails
#                                        (exit 1, MISMATCH), a truncated file is refused (exit 2)
#   ranks.sh BITPARITY mpirun-term W -   SIGTERM to mpirun during a long row: summary and rows kept
#   ranks.sh BITPARITY failure W HOW     rank 1 fails on purpose (throw, abort, kill, hang): the run
#                                        fails within the timeout, names rank 1 and leaves no process
#                                        and no temporary folder
#   ranks.sh BITPARITY failure-p11 W HOW  the same in P11's second case, when its checkpoint folder
#                                        holds files: the folder is gone after the run however it ended
bin=$1; kind=$2; world=$3; arg=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAILED: $*"; exit 1; }
# BITPARITY_REQUIRE_GPU as bitparity reads it (fixtures/src/gpu_requirement.cpp).
gpu_required() {
  case $(printf '%s' "$BITPARITY_REQUIRE_GPU" | tr '[:upper:]' '[:lower:]') in
    ''|0|false|no|off) return 1 ;;
    1|true|yes|on) return 0 ;;
    *) fail "BITPARITY_REQUIRE_GPU='$BITPARITY_REQUIRE_GPU' is neither yes nor no; set it to 1 or 0" ;;
  esac
}
# Files of their own: ctest runs these tests side by side in one folder.
out="out_${kind}_${world}_${arg}.txt"; err="err_${kind}_${world}_${arg}.txt"
case "$kind" in
  parity)
    mpirun -np "$world" "$bin" sharded --steps 3 --cases 2 --seed "$arg" || fail "wrong elements at W=$world (exit $?)"
    ;;
  mutant)
    case "$arg" in
      mutant:*) hunt="--implementation $arg --cases 2" ;;
      *) hunt="--mutant $arg" ;;
    esac
    mpirun -np "$world" "$bin" sharded $hunt --seed 3 >"$out" 2>&1
    code=$?
    tail -n 3 "$out"
    [ "$code" -eq 0 ] && grep -q "mutant $arg: killed" "$out" || fail "mutant $arg survived (exit $code)"
    # The first failing row's replay runs as printed (this binary, not a `bitparity` on PATH) and kills it again.
    replay=$(grep -m 1 "^  replay: " "$out" | sed 's/^  replay: //')
    case "$replay" in "mpirun -np $world $bin sharded "*) ;; *) fail "the replay does not name this binary: $replay" ;; esac
    eval "$replay" >"$out" 2>&1 && grep -q "mutant $arg: killed" "$out" || { cat "$out"; fail "the printed replay did not kill $arg: $replay"; }
    ;;
  failure|failure-p11)
    marker="--seed 42$(printf %s "$kind$arg" | cksum | cut -c1-6)"  # unique per test: pgrep finds only ours
    # A temporary folder of this test's own: whatever a rank leaves there shows.
    TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/bitparity-ranks-test.XXXXXX") || fail "cannot make a temporary folder"
    export TMPDIR
    trap 'rm -rf "$TMPDIR"' EXIT
    if [ "$kind" = failure ]; then
      where="case 2"; run="--optimizer adam --inject-failure 1:$arg:2"
    else
      where="case 1"; run="--optimizer adam --property P11 --inject-failure 1:$arg:1"
    fi
    started=$(date +%s)
    mpirun -np "$world" "$bin" sharded $run --stuck-seconds 5 $marker >"$out" 2>"$err"
    code=$?
    elapsed=$(( $(date +%s) - started ))
    cat "$err" | grep -v "^\s*$" | head -n 12
    [ "$code" -ne 0 ] || fail "the run passed although rank 1 failed"
    [ "$elapsed" -le 60 ] || fail "the failure took $elapsed s to end the run"
    grep -q "rank 1" "$err" || fail "the failure does not name rank 1"
    grep -q "$where" "$err" || fail "the failure does not say what rank 1 was doing"
    sleep 1
    if pgrep -f -- "$marker" >/dev/null; then pgrep -af -- "$marker"; fail "processes were left behind"; fi
    left=$(ls -A "$TMPDIR")
    [ -z "$left" ] || { ls -laR "$TMPDIR"; fail "the run left $left in the temporary folder"; }
    echo "ok: exit $code after ${elapsed} s"
    ;;
  signal)
    # A rank killed (kill9), interrupted (int) or stopped (stop) from outside. Killed: the rows finished before it are
    # in --json (rank 0 writes after the first row, then once a second; they were lost). Stopped: the ranks that notice name
    # the stopped rank, not only themselves ("no progress ... (a peer rank failed or hangs)").
    marker="--seed 43$(printf %s "$kind$arg" | cksum | cut -c1-6)"
    rm -f rows.json
    mpirun -np "$world" "$bin" sharded --optimizer adam --optimizer sgd --cases 100 --stuck-seconds 5 --json rows.json $marker >"$out" 2>"$err" &
    job=$!
    for _ in $(seq 1 300); do [ -s rows.json ] && break; sleep 0.1; done
    [ -s rows.json ] || { kill $job; fail "no row was written within 30 s"; }
    victim=""; victim_rank=""
    for pid in $(pgrep -x bitparity); do
      tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qx -- "${marker#--seed }" || continue
      rank=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
      [ "$rank" = 2 ] && { victim=$pid; victim_rank=$rank; }
    done
    [ -n "$victim" ] || { kill $job; fail "rank 2 was not found"; }
    case "$arg" in kill9) kill -KILL "$victim" ;; int) kill -INT "$victim" ;; *) kill -STOP "$victim" ;; esac
    started=$(date +%s)
    wait $job
    code=$?
    elapsed=$(( $(date +%s) - started ))
    kill -CONT "$victim" 2>/dev/null
    grep -v "^\s*$" "$err" | head -n 8
    [ "$code" -ne 0 ] || fail "the run passed although rank $victim_rank was signalled"
    [ "$elapsed" -le 60 ] || fail "the run took $elapsed s to end"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and len(d["results"]) >= 1, d["summary"]' rows.json ||
      fail "the rows finished before the signal are not in the JSON"
    if [ "$arg" = stop ]; then
      grep -q "waiting on rank 2 ([0-9]* s), whose process has stopped running" "$err" || fail "the stopped rank is not named"
    fi
    # Ctrl-C to one rank's terminal: every rank stops, and all say SIGINT (they said "a signal to
    # another rank" and exited 143, as for SIGTERM).
    if [ "$arg" = int ]; then
      [ "$code" -eq 130 ] || fail "SIGINT to rank 2: exit $code, not 130"
      grep -q "^summary: .*interrupted by SIGINT to another rank" "$out" || { cat "$out"; fail "the summary does not name SIGINT"; }
    fi
    echo "ok: exit $code after ${elapsed} s, $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' rows.json) rows kept"
    ;;
  mpirun-term)
    # SIGTERM to mpirun (a CI timeout, a person's kill): mpirun passes it on and kills the ranks about
    # a second later. A row of many cases outlasted that, so nothing was printed or kept (exit 1).
    # Every rank now stops before its next case: the summary is printed and the rows kept.
    rm -f rows_term.json
    mpirun -np "$world" "$bin" sharded --property P6 --optimizer adam --cases 300 --json rows_term.json >"$out" 2>"$err" &
    job=$!
    for _ in $(seq 1 900); do grep -q "^P6 " "$out" && break; sleep 0.1; done
    grep -q "^P6 " "$out" || { kill $job; cat "$out" "$err"; fail "no row was printed within 90 s"; }
    kill -TERM $job
    wait $job
    code=$?
    cat "$out"
    grep -q "^summary: .*interrupted by SIGTERM: .* rows not run, the last row cut after [0-9]* cases" "$out" ||
      { cat "$err"; fail "no summary after mpirun's SIGTERM (exit $code)"; }
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] is False and len(d["results"]) >= 2, d.get("summary")
assert "stopped by a signal after" in d["results"][-1]["incomplete"], d["results"][-1]' rows_term.json ||
      fail "the rows run before the signal, and the cut one, are not in the JSON"
    echo "ok: mpirun's SIGTERM gave exit $code with the summary and $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' rows_term.json) rows"
    ;;
  mixed)
    if ! "$bin" list | grep -q "^  $arg\$"; then
      gpu_required && fail "no $arg and BITPARITY_REQUIRE_GPU is set"
      echo "skipped: no $arg here"; exit 77
    fi
    mpirun -np "$world" "$bin" sharded --rank-implementation "0=$arg" --steps 3 --cases 2 --seed 11 \
      || fail "the mixed world (rank 0 on $arg) differs from the all-CPU step (exit $?)"
    ;;
  communicator)
    ranks=""
    if [ "$arg" = nccl ]; then
      last=$((world - 1))
      if ! "$bin" list | grep -q "^  cuda:$last\$"; then
        # BITPARITY_REQUIRE_GPU demands a GPU, not several: fewer GPUs than ranks is a skip.
        if gpu_required && ! "$bin" list | grep -q "^  cuda:0\$"; then
          fail "no GPU and BITPARITY_REQUIRE_GPU is set"
        fi
        echo "skipped: NCCL at W=$world needs $world GPUs (cuda:0..cuda:$last)"; exit 77
      fi
      for r in $(seq 0 "$last"); do ranks="$ranks --rank-implementation $r=cuda:$r"; done
    fi
    mpirun -np "$world" "$bin" sharded --communicator "$arg" $ranks --steps 3 --cases 1 --seed 5 \
      || fail "wrong elements over $arg at W=$world (exit $?)"
    ;;
  nccl-refusal)
    mpirun -np "$world" "$bin" sharded --communicator nccl --implementation "$arg" >"$out" 2>"$err"
    code=$?
    cat "$err"
    [ "$code" -eq 2 ] || fail "exit $code, expected 2"
    grep -q "NCCL ranks are GPU ranks" "$err" || fail "the refusal does not say why"
    [ "$(grep -c "^error:" "$err")" -eq 1 ] || fail "expected one error line"
    ;;
  refusals)
    # Every rank parses the same input: one line, from rank 0, well inside the others' wait.
    # A one-process command under mpirun: every rank ran it whole and wrote the same --json.
    for bad in "sharded --states 0" "sharded --nonsense" "sharded --case $out.missing.json" "nonsense" "check --suite quant --cases 1"; do
      start=$(date +%s)
      mpirun -np "$world" "$bin" $bad >"$out" 2>"$err"
      code=$?
      took=$(($(date +%s) - start))
      cat "$err"
      [ "$code" -eq 2 ] || fail "$bad: exit $code, expected 2"
      [ "$(grep -c "^error:" "$err")" -eq 1 ] || fail "$bad: expected one error line, not one a rank"
      [ "$took" -lt 8 ] || fail "$bad: the refusal took $took s: the other ranks outwaited rank 0"
      [ ! -s "$out" ] || { cat "$out"; fail "$bad: something was printed before the refusal"; }
    done
    # Rank 0 accepts and rank 1 refuses: rank 1 says why after its wait, and the job ends.
    mpirun -np 1 "$bin" sharded --steps 1 : -np 1 "$bin" sharded --states 0 >"$out" 2>"$err"
    code=$?
    cat "$err"
    [ "$code" -ne 0 ] || fail "a refusal on rank 1 alone passed"
    grep -q "^error: --states: 0 not in" "$err" || fail "rank 1's refusal was not said"
    ;;
  benchmark)
    mpirun -np "$world" "$bin" sharded --benchmark --states 32 --states 8 --elements 5000 --steps 2 --json "$arg" >"$out" 2>&1 \
      || { cat "$out"; fail "exit $?"; }
    cat "$out"
    for key in '"schema": "bitparity.sharded-benchmark/1"' '"layout": "zero-1/2"' '"layout": "zero-3"' '"layout": "per-parameter"' '"ratio": '; do
      grep -q "$key" "$arg" || fail "$arg lacks $key"
    done
    [ "$(grep -c '"ratio"' "$arg")" -eq 6 ] || fail "expected 6 rows (3 layouts x fp32/8-bit)"
    # Every row times exactly the elements asked for.
    [ "$(grep -c '"elements": 5000' "$arg")" -eq 6 ] || fail "a row timed another count than --elements 5000"
    ;;
  json)
    mpirun -np "$world" "$bin" sharded --optimizer lamb --dtype bf16 --json "$arg" >"$out" 2>&1 || { cat "$out"; fail "exit $?"; }
    for key in '"world_size": '"$world" '"layout": "zero-3"' '"layout": "chunk+all_gather"' '"ranks": \[' '"schema": "bitparity.sharded/1"'; do
      grep -q "$key" "$arg" || fail "$arg lacks $key"
    done
    echo "ok: $(grep -c '"property"' "$arg") rows"
    ;;
  resume)
    only=""; [ "$arg" = all ] || only="--optimizer $arg"
    mpirun -np "$world" "$bin" sharded --property P11 --all-world-pairs $only --steps 2 --seed 4 >"$out" 2>&1
    code=$?
    tail -n 2 "$out"
    [ "$code" -eq 0 ] || { grep -A2 "^FAILED" "$out" | head -n 12; fail "resume differs from the run that never stopped (exit $code)"; }
    ;;
  resume-device)
    if ! "$bin" list | grep -q "^  $arg\$"; then
      gpu_required && fail "no $arg and BITPARITY_REQUIRE_GPU is set"
      echo "skipped: no $arg here"; exit 77
    fi
    mpirun -np "$world" "$bin" sharded --property P11 --all-world-pairs --resume-implementation "$arg" --steps 2 --seed 12 \
      || fail "saved on cpu, resumed on $arg: not the run that never stopped (exit $?)"
    mpirun -np "$world" "$bin" sharded --property P11 --all-world-pairs --implementation "$arg" --resume-implementation cpu \
      --steps 2 --seed 13 || fail "saved on $arg, resumed on cpu: not the run that never stopped (exit $?)"
    ;;
  maps)
    signed=${arg%,*}; unsigned=${arg#*,}
    mpirun -np "$world" "$bin" sharded --property P6 --property P11 --states 8 --map "$signed" --map "$unsigned" \
      --all-world-pairs --seed 9 >"$out" 2>&1 || { tail -n 8 "$out"; fail "P6/P11 on maps $arg failed (exit $?)"; }
    tail -n 1 "$out"
    mpirun -np "$world" "$bin" sharded --property P11 --states 8 --map "$signed" --map "$unsigned" \
      --mutant checkpoint-maps-not-restored --seed 3 >"$out" 2>&1
    code=$?
    tail -n 2 "$out"
    [ "$code" -eq 0 ] && grep -q "mutant checkpoint-maps-not-restored: killed" "$out" || fail "checkpoint-maps-not-restored survived (exit $code)"
    ;;
  check-suite)
    mpirun -np "$world" "$bin" check --suite "$arg" --seed 4 >"$out" 2>&1 || { tail -n 8 "$out"; fail "check --suite $arg failed (exit $?)"; }
    tail -n 1 "$out"
    grep -q "on $world ranks, 0 failed" "$out" || fail "check --suite $arg did not run over $world ranks"
    ;;
  checkpoint)
    rm -rf "$arg"
    mpirun -np "$world" "$bin" sharded --property P11 --optimizer adam --states 8 --layout zero-3 --dtype bf16 --all-world-pairs \
      --checkpoint-dir "$arg" --seed 6 >"$out" 2>&1 || { cat "$out"; fail "P11 failed (exit $?)"; }
    file=$(find "$arg" -name universal.safetensors | head -n 1)
    [ -n "$file" ] || fail "no universal.safetensors under $arg"
    "$bin" checkpoint inspect "$file" --json "$arg/inspect.json" >"$out" 2>&1 || { cat "$out"; fail "a good checkpoint fails inspect (exit $?)"; }
    grep -q "every tensor matches its CRC-32" "$out" || fail "inspect does not confirm the checksums"
    python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["metadata"]; assert m["form"] == "universal" and m["optimizer"] == "adam" and m["states"] == "8-bit", m' \
      "$arg/inspect.json" || fail "inspect JSON lacks the metadata"
    # A rank's own shard (the form a resume on the same world reads) holds as well: inspect read its
    # form "rank-shard" as a header a resume refuses.
    shard=$(find "$arg" -name 'rank-*-of-*.safetensors' | head -n 1)
    if [ -n "$shard" ]; then
      "$bin" checkpoint inspect "$shard" >"$out" 2>&1 || { cat "$out"; fail "a rank shard fails inspect (exit $?)"; }
    elif [ "$world" -gt 1 ]; then
      fail "no rank shard under $arg on $world ranks"
    fi
    size=$(wc -c <"$file")
    cp "$file" "$arg/flipped.safetensors"
    printf '\377' | dd of="$arg/flipped.safetensors" bs=1 seek=$((size - 2)) conv=notrunc 2>/dev/null
    "$bin" checkpoint inspect "$arg/flipped.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "MISMATCH" "$out" || { cat "$out"; fail "a flipped byte gives exit $code, expected 1 and MISMATCH"; }
    head -c $((size / 2)) "$file" >"$arg/truncated.safetensors"
    "$bin" checkpoint inspect "$arg/truncated.safetensors" >"$out" 2>"$err"
    code=$?
    cat "$err"
    [ "$code" -eq 2 ] && grep -q "^error: .*truncated" "$err" || fail "a truncated file gives exit $code, expected 2 and a reason"
    # Edited checksums are named for what they are (a missing one was "MISMATCH" beside the right
    # CRC); either case of hex digits is the checksum; names reach the terminal escaped (ESC[2J
    # cleared the screen, a newline forged a row).
    # edit NAME PYTHON [stale]: the file with its header metadata `m` (and tensor table `h`) edited,
    # its header CRC-32 made anew as a careful editor would (or, with "stale", left as it was).
    edit() {
      python3 - "$file" "$arg/$1.safetensors" "$2" "${3:-}" <<'EOF'
import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
h = json.loads(data[8:8 + n]); m = h["__metadata__"]; crc = json.loads(m["crc32"])
exec(sys.argv[3])
if crc is not None: m["crc32"] = json.dumps(crc)
def netstring(text):
    b = text.encode()
    return str(len(b)).encode() + b":" + b + b","
if sys.argv[4] != "stale" and "header_crc32" in m:
    text = b"".join(netstring("m") + netstring(k) + netstring(m[k]) for k in sorted(m) if k != "header_crc32")
    text += b"".join(netstring("t") + netstring(t) + netstring(h[t]["dtype"]) + netstring(",".join(str(x) for x in h[t]["shape"]))
                     for t in sorted(h) if t != "__metadata__")
    m["header_crc32"] = "%08x" % zlib.crc32(text)
header = json.dumps(h).encode()
open(sys.argv[2], "wb").write(struct.pack("<Q", len(header)) + header + data[8 + n:])
EOF
    }
    first=$(python3 -c 'import json,struct,sys; d=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",d[:8])[0]; print(sorted(k for k in json.loads(d[8:8+n]) if k != "__metadata__")[0])' "$file")
    edit no-crc "del crc['$first']"
    "$bin" checkpoint inspect "$arg/no-crc.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "NO CRC STORED" "$out" && ! grep -q MISMATCH "$out" || { cat "$out"; fail "a missing CRC: exit $code"; }
    # The header is covered too: a step edited from 2 to 7 passed as "every tensor matches its CRC-32",
    # and a resume read it. Only the header CRC-32 made anew passes, as tensor CRC-32s made anew do.
    step=$(python3 -c 'import json,struct,sys; d=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",d[:8])[0]; print(json.loads(d[8:8+n])["__metadata__"]["step"])' "$file")
    edit stale-step "m['step'] = str($step + 5)" stale
    "$bin" checkpoint inspect "$arg/stale-step.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "header CRC-32 [0-9a-f]*: MISMATCH: its header does not match" "$out" &&
      grep -q "every tensor matches its CRC-32; the header does not match its header CRC-32" "$out" || { cat "$out"; fail "an edited step: exit $code"; }
    # One byte of "format" edited turned every check off ("not a bitparity checkpoint", exit 0): the
    # checksums only bitparity writes still mark it as one, and its header CRC-32 covers the format.
    edit format-edited "m['format'] = m['format'].replace('checkpoint', 'checkpoinT')" stale
    "$bin" checkpoint inspect "$arg/format-edited.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "header CRC-32 [0-9a-f]*: MISMATCH" "$out" || { cat "$out"; fail "an edited format: exit $code"; }
    edit no-header-crc "del m['header_crc32']" stale
    "$bin" checkpoint inspect "$arg/no-header-crc.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q 'MISMATCH: its header has no .header_crc32.' "$out" || { cat "$out"; fail "no header CRC: exit $code"; }
    edit fresh-header-crc "m['step'] = str($step)"
    "$bin" checkpoint inspect "$arg/fresh-header-crc.safetensors" >"$out" 2>&1 || { cat "$out"; fail "a header CRC made anew: exit $?"; }
    grep -q "header CRC-32 [0-9a-f]*: ok" "$out" || { cat "$out"; fail "the good header is not confirmed"; }
    # With its header CRC-32 made anew, an edit past what a resume reads passed as "every tensor
    # matches" (a step of -1, a world of 0 ranks, groups that are no JSON): the fields are read too.
    for bad in "m['step'] = '-1'" "m['world_size'] = '0'" "m['groups'] = 'not json'"; do
      edit forged "$bad"
      "$bin" checkpoint inspect "$arg/forged.safetensors" >"$out" 2>&1
      code=$?
      [ "$code" -eq 1 ] && grep -q "header CRC-32 [0-9a-f]*: ok" "$out" && grep -q "its header holds a field a resume refuses: " "$out" ||
        { cat "$out"; fail "$bad with a fresh header CRC: exit $code"; }
    done
    # No "crc32" at all was an internal error (map::at, exit 5).
    edit no-checksums "crc = None; del m['crc32']"
    "$bin" checkpoint inspect "$arg/no-checksums.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q 'the header stores no CRC-32s (no "crc32")' "$out" || { cat "$out"; fail "no crc32: exit $code"; }
    # A "crc32" that is not an object of checksums was refused (exit 2); malformed is a finding, as missing.
    for malformed in '"not json"' '[1, 2]'; do
      edit malformed-crc "crc = None; m['crc32'] = $malformed if isinstance($malformed, str) else json.dumps($malformed)"
      "$bin" checkpoint inspect "$arg/malformed-crc.safetensors" >"$out" 2>&1
      code=$?
      [ "$code" -eq 1 ] && grep -q 'the header.s "crc32" is not an object of tensor checksums' "$out" ||
        { cat "$out"; fail "crc32 $malformed: exit $code"; }
    done
    edit upper-crc "crc = {k: v.upper() for k, v in crc.items()}"
    "$bin" checkpoint inspect "$arg/upper-crc.safetensors" >"$out" 2>&1 || { cat "$out"; fail "upper-case CRCs: exit $?"; }
    edit ghost-crc "crc['ghost'] = '00000000'"
    "$bin" checkpoint inspect "$arg/ghost-crc.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "stored for tensor 'ghost', which the file does not hold" "$out" || { cat "$out"; fail "a CRC of no tensor: exit $code"; }
    edit escaped-name "h['a\\nb\\x1b[2J'] = h.pop('$first'); crc['a\\nb\\x1b[2J'] = crc.pop('$first')"
    # The renamed tensor is one a resume looks for: its absence is a finding (exit 1) too.
    "$bin" checkpoint inspect "$arg/escaped-name.safetensors" >"$out" 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "a resume refuses: .*it holds no tensor" "$out" || { cat "$out"; fail "an escaped name: exit $code"; }
    grep -q 'a\\nb\\x1B\[2J ' "$out" && ! grep -q "$(printf '\033')" "$out" || { cat -A "$out"; fail "a control character reached the terminal raw"; }
    echo "ok: good file passes, flipped byte exit 1, truncated exit 2, edited checksums named, names escaped"
    ;;
  *) fail "unknown kind $kind" ;;
esac
