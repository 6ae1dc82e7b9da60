#!/usr/bin/env bash
# What the second contract sweep found wrong with files and selections: special files read as
# cases, JSON fields of the wrong type, edited cases, runs that check nothing, two runs on one
# folder, and list's JSON. Usage: contract_inputs.sh BITPARITY FAULTY_PLUGIN CORPUS CASE (ctest).
set -u
bin="$1"
faulty="$2"
corpus="$3"
case_name="$4"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
# refused PATTERN ARGS...: exit 2, one line, "error: ...PATTERN".
refused() {
  local pattern=$1; shift
  "$@" >out.txt 2>&1
  local code=$?
  [ "$code" -eq 2 ] && [ "$(wc -l <out.txt)" -eq 1 ] && grep -q "^error: .*$pattern" out.txt ||
    { cat out.txt; fail "$* : exit $code, not one line '$pattern'"; }
}

# edited IN OUT PYTHON: the JSON file IN with statement PYTHON run on it as `d`, its fingerprint
# removed (as the README allows for an edit), written to OUT.
edited() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop('fingerprint', None); $3; json.dump(d, open(sys.argv[2],'w'))" "$1" "$2"
}

case "$case_name" in
  special-files)
    # Each was "no such file or folder".
    refused "/dev/null: a device, not a file" "$bin" replay /dev/null
    refused "/dev/zero: a device, not a file" "$bin" replay /dev/zero
    mkfifo fifo
    refused "fifo: a FIFO, not a file" "$bin" replay fifo
    ln -s loop-a loop-b && ln -s loop-b loop-a
    refused "loop-a: a loop of symbolic links" "$bin" replay loop-a
    ln -s nowhere dangling
    refused "dangling: a link to nothing" "$bin" replay dangling
    echo "ok: special files named as what they are"
    ;;
  wrong-json-types)
    # A "schema" that is a number was an internal error (exit 5, nlohmann's type_error.302).
    mkdir -p c
    echo '{"schema": 5, "next_visit": 3}' >c/fuzz-state.json
    refused "c/fuzz-state.json is not a fuzz state .bitparity.fuzz-state/1" "$bin" fuzz --corpus c --budget 1s
    rm c/fuzz-state.json
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 3, "runs": [], "extra": {"schema": 1}}' >c/fuzz-state.json
    "$bin" fuzz --corpus c --first-visit 0 --budget 4s --suite conversions >/dev/null 2>&1 || fail "a state with an unknown field was refused"
    echo '{"schema": 7, "property": "P6"}' >rank.json
    refused "rank.json: not a rank case" "$bin" sharded --case rank.json
    echo '{"schema": "bitparity.rank-case/2", "property": 6}' >rank.json
    refused "rank.json: a rank case needs the text field \"property\"" "$bin" sharded --case rank.json
    # A field no explicit check names still reaches the one reader's net, not an internal error.
    python3 - "$corpus"/over-ranks/P10-storage-dynamic8-signed-f16-f32-fsdp1-flat-W2-mutant-storage-float-conversion-copy-*.json <<'PYTHON'
import json, sys
case = json.load(open(sys.argv[1]))
case["violation"] = 5
json.dump(case, open("numeric-violation.json", "w"))
PYTHON
    refused "numeric-violation.json: a field has the wrong type .type must be string, but is number.. give a rank case" \
      "$bin" sharded --case numeric-violation.json
    # The history of runs is carried into every later state: junk there is refused, not kept.
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 3, "runs": [{"seed": "1", "cases": 2}, 7]}' >c/fuzz-state.json
    refused "c/fuzz-state.json: run 2 of its history is 7, not an object" "$bin" fuzz --corpus c --budget 1s --suite conversions
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 3, "runs": [{"seed": "1", "cases": -2}]}' >c/fuzz-state.json
    refused "c/fuzz-state.json: run 1 of its history 'cases' is not a count" "$bin" fuzz --corpus c --budget 1s --suite conversions
    rm c/fuzz-state.json
    echo "ok: fields of the wrong type refused with exit 2, naming the file"
    ;;
  edited-case)
    source_case="$corpus/cases/P1-adam-f32-mutant.adam-eps-inside-sqrt-2bdecaf9cf6901c5.json"
    [ -f "$source_case" ] || fail "the corpus lacks $source_case"
    edit() {  # edit OUT "HEXFLOAT BITS": the case with that lr and its fingerprint removed (as the README allows)
      python3 - "$source_case" "$1" "$2" <<'PYTHON'
import json, sys
case = json.load(open(sys.argv[1]))
case["inputs"]["case"]["hyperparameters"]["lr"] = sys.argv[3]
del case["fingerprint"]
json.dump(case, open(sys.argv[2], "w"), indent=1)
PYTHON
    }
    # lr = -1 is no case of any property: the mutant's refusal was counted as a kill (exit 0), and
    # the cpu replay called it "a valid case".
    edit negative.json "-0x1p+0 0xbf800000"
    refused "negative.json: .*hyperparameters outside the optimizer's domain.*lr must be" "$bin" replay negative.json
    refused "negative.json: .*hyperparameters outside the optimizer's domain" "$bin" replay --implementation cpu negative.json
    # A valid edit replays, and the description written for the old inputs (lr=0x1.99999ap-4) is not shown.
    edit edited.json "0x1p-2 0x3e800000"
    "$bin" replay --implementation cpu edited.json --json edited-out.json >out.txt 2>&1 || { cat out.txt; fail "a valid edit did not hold on cpu"; }
    "$bin" replay edited.json --json edited-mutant.json >out.txt 2>&1 || { cat out.txt; fail "a valid edit no longer kills its mutant"; }
    ! grep -q "0x1.99999ap-4" out.txt edited-out.json edited-mutant.json || fail "the stale description of the old lr is shown"
    echo "ok: an edited case outside the domain is refused; a valid edit shows no stale description"
    ;;
  nothing-checkable)
    # A plugin with a quantize and no dequantize: every quant row is not applicable. check said
    # "9 of 9 rows run, 0 failed" (exit 0); fuzz ran 315103 visits and no case (exit 0).
    export BITPARITY_FAULTY_PLUGIN_QUANTIZE_ONLY=1
    refused "nothing to check: none of the [0-9]* selected rows applies .plugin:$faulty does not offer the dequantize" \
      "$bin" check --implementation "plugin:$faulty" --suite quant --cases 1
    refused "nothing to check: none of the [0-9]* units .property x target x implementation. applies" \
      "$bin" fuzz --implementation "plugin:$faulty" --suite quant --budget 2s --corpus fz
    [ ! -e fz/fuzz-state.json ] || fail "the refused fuzz wrote a state"
    refused "nothing to check: none of the 1 cases applies" "$bin" replay --implementation "plugin:$faulty" "$corpus"/cases/P7-dynamic8-signed-f32-64-mutant.approximate-division-0d5de6b8bb9266e9.json
    unset BITPARITY_FAULTY_PLUGIN_QUANTIZE_ONLY
    # Where some rows apply, the summary counts those that did not.
    "$bin" check --implementation "plugin:$faulty" --suite quant --format nf4 --dtype f16 --cases 1 >out.txt 2>&1
    code=$?
    [ "$code" -eq 2 ] || { cat out.txt; fail "f16, which the plugin does not take, ran (exit $code)"; }
    "$bin" check --implementation "plugin:$faulty" --device cpu --suite quant --format nf4 --dtype f16 --cases 1 >out.txt 2>&1
    grep -q "^summary: .* [1-9][0-9]* not applicable" out.txt || { cat out.txt; fail "the summary does not count the rows not applicable"; }
    echo "ok: a run that can check nothing is refused before any work"
    ;;
  one-run-per-folder)
    # Two fuzz runs on one corpus: the state kept the last writer's run and next_visit went back.
    "$bin" fuzz --suite conversions --budget 30s --jobs 1 --corpus shared >first.txt 2>&1 &
    first=$!
    for _ in $(seq 1 100); do [ -e shared/.bitparity.lock ] && grep -q "^pid" shared/.bitparity.lock 2>/dev/null && break; sleep 0.1; done
    refused "--corpus shared is in use by another run .pid $first: .*fuzz.*wait for it to end, or give another folder" \
      "$bin" fuzz --suite conversions --budget 2s --corpus shared
    # The same lock guards a report's --out and sharded's --checkpoint-dir.
    refused "--out shared is in use by another run .pid $first" "$bin" report --out shared --steps 2 --elements 8 --skip-sweeps
    refused "--checkpoint-dir shared is in use by another run .pid $first" "$bin" sharded --property P11 --checkpoint-dir shared
    kill -TERM "$first"
    wait "$first"
    # A lock file that is a link is not written through (it truncated the file it pointed to).
    mkdir -p linked && echo precious >victim.txt && ln -s "$PWD/victim.txt" linked/.bitparity.lock
    refused "--corpus linked: its lock file .bitparity.lock is a symbolic link" "$bin" fuzz --suite conversions --budget 1s --corpus linked
    [ "$(cat victim.txt)" = precious ] || fail "the file the lock link points to was overwritten"
    # The lock goes with its run, however it ends: the next run takes the folder.
    "$bin" fuzz --suite conversions --budget 30s --jobs 1 --corpus shared >second.txt 2>&1 &
    second=$!
    sleep 1
    kill -KILL "$second"
    wait "$second" 2>/dev/null
    "$bin" fuzz --suite conversions --first-visit 0 --budget 4s --corpus shared >third.txt 2>&1 || { cat third.txt; fail "the folder stayed locked after its run was killed"; }
    echo "ok: one run per corpus; a killed run leaves no lock behind"
    ;;
  results-apart-from-inputs)
    # A results path that is a file the same run reads was overwritten: a --map file, a plugin.
    python3 - <<'PYTHON'
import json, struct
def bits(x): return struct.unpack("<I", struct.pack("<f", x))[0]
json.dump([bits((i - 127) / 128.0) for i in range(256)], open("ramp8.json", "w"))
PYTHON
    cp ramp8.json before.json
    refused "--json 'ramp8.json' is the --map file 'ramp8.json', which the results would replace" \
      "$bin" check --map ramp8.json --cases 1 --json ramp8.json
    refused "is the --map file" "$bin" drift --eight-bit --map ramp8.json --steps 2 --elements 8 --json ramp8.json
    cmp -s ramp8.json before.json || fail "the map was changed"
    cp "$faulty" plugin.so
    refused "--json 'plugin.so' is the plugin './plugin.so'" "$bin" check --implementation plugin:./plugin.so --suite quant --cases 1 --json plugin.so
    cmp -s plugin.so "$faulty" || fail "the plugin was changed"
    # A case given twice ran and counted twice.
    source_case="$corpus/cases/P1-adam-f32-mutant.adam-eps-inside-sqrt-2bdecaf9cf6901c5.json"
    refused "is given twice" "$bin" replay "$source_case" "$source_case"
    # An edited entry replayed adam's inputs under sgd's name (exit 0).
    python3 - "$source_case" <<'PYTHON'
import json, sys
case = json.load(open(sys.argv[1]))
case["entry"] = "sgd"
del case["fingerprint"]
json.dump(case, open("renamed.json", "w"))
PYTHON
    refused "the case's inputs are \"adam\" inputs, but its 'entry' says 'sgd'" "$bin" replay renamed.json
    echo "ok: no results file replaces an input; a case is replayed once, as what it holds"
    ;;
  list-json)
    "$bin" list --json list.json >list.txt 2>&1 || { cat list.txt; fail "list --json failed"; }
    python3 - list.json list.txt <<'PYTHON' || fail "list.json does not hold what list prints"
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert d["schema"] == "bitparity.list/1", d["schema"]
assert {p["id"] for p in d["properties"]} >= {"P1", "P7", "P12"}
for key in ("code_maps", "optimizers", "mutants"):
    for entry in d[key]:
        assert "  " + entry["name"] in text, entry["name"]
assert all("range" in h for o in d["optimizers"] for h in o["hyperparameters"])
assert d["devices"][0] == "cpu" and isinstance(d["cuda_built"], bool)
PYTHON
    refused "--json was given an empty path" "$bin" list --json ""
    echo "ok: list --json holds every list"
    ;;
  twin-keys)
    # nlohmann keeps the last of two equal keys, so an edit that added one ran on it without a word.
    twice() {  # twice IN OUT KEY: IN with KEY's first occurrence written twice, the first copy null
      python3 - "$1" "$2" "$3" <<'PYTHON'
import sys
text, key = open(sys.argv[1]).read(), '"' + sys.argv[3] + '"'
at = text.index(key)
open(sys.argv[2], "w").write(text[:at] + key + ": null, " + text[at:])
PYTHON
    }
    mkdir -p c
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 3, "runs": []}' >state.json
    twice state.json c/fuzz-state.json next_visit
    refused "c/fuzz-state.json: key 'next_visit' appears twice in one object; keep one" "$bin" fuzz --corpus c --budget 1s
    python3 -c 'import json; print(json.dumps({"name": "ramp", "values": [hex(0x3f800000 - i) for i in range(16)]}))' >map.json
    twice map.json twin-map.json values
    refused "twin-map.json: key 'values' appears twice in one object; keep one" "$bin" check --map twin-map.json --cases 1
    twice "$corpus/cases/P1-adam-f32-mutant.adam-eps-inside-sqrt-2bdecaf9cf6901c5.json" twin-case.json inputs
    refused "twin-case.json: .*key 'inputs' appears twice in one object" "$bin" replay twin-case.json
    twice "$(ls "$corpus"/over-ranks/P10-*float-conversion-copy-*.json)" twin-rank.json property
    refused "twin-rank.json: key 'property' appears twice in one object; keep one" "$bin" sharded --case twin-rank.json
    # A property no run over ranks has is named as such (it was refused as an optimizer's case).
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["property"]="P99"; json.dump(d, open("p99.json","w"))' \
      "$(ls "$corpus"/over-ranks/P10-*float-conversion-copy-*.json)"
    refused "p99.json: \"property\" 'P99' is none of the properties over ranks (P6, P2r, P10, P11)" "$bin" sharded --case p99.json
    # A rank case that is not JSON says so, rather than "not a rank case".
    echo '{"schema": "bitparity.rank-case/2", "world_size": NaN}' >nan.json
    refused "nan.json: not valid JSON (.*); give a rank case" "$bin" sharded --case nan.json
    echo "ok: a key given twice is refused, naming it"
    ;;
  unknown-fields)
    # A field the format does not have was ignored: an edit there (a typo) changed nothing, silently.
    edited "$corpus/cases/P1-adam-f32-mutant.adam-eps-inside-sqrt-2bdecaf9cf6901c5.json" typo-case.json 'd["input"] = d.pop("input_notes")'
    refused "typo-case.json: .*a case file has no field 'input'; its fields are schema," "$bin" replay typo-case.json
    rank="$(ls "$corpus"/over-ranks/P6-*gradients-by-position-*.json)"
    edited "$rank" typo-rank.json 'd["world"] = 5'
    refused "typo-rank.json: a rank case has no field 'world'; its fields are schema," "$bin" sharded --case typo-rank.json
    edited "$rank" extra-initial.json 'd["case"]["initial"]["424242"] = []'
    refused "extra-initial.json: case: 'initial' holds values of '424242', which is no parameter of 'groups'" "$bin" sharded --case extra-initial.json
    edited "$rank" extra-field.json 'd["case"]["lr"] = 1'
    refused "extra-field.json: case: the case has no field 'lr'" "$bin" sharded --case extra-field.json
    echo "ok: fields no format has are refused, naming them"
    ;;
  fourth-sweep)
    # Edits the fourth sweep found accepted: each replayed, some as a kill or a false failure.
    p1q=$(ls "$corpus"/cases/P1q-adam-f32-64-mutant.optim8-hidden-step-counter-*.json)
    edited "$p1q" unorm.json "d['inputs']['case']['base']['hyperparameters']['max_unorm'] = '0x1p-20 0x35800000'"
    refused "unorm.json: .*8-bit states take no max_unorm; set it to 0" "$bin" replay unorm.json
    edited "$p1q" absmax.json "d['inputs']['case']['absmax'][0][0] = 'nan 0x7fc00000'"
    refused "absmax.json: .*state 0: a block absmax must be finite and +0 or more, not nan" "$bin" replay absmax.json
    edited "$p1q" negative.json "d['inputs']['case']['absmax'][0][0] = '-0x1p+0 0xbf800000'"
    refused "negative.json: .*a block absmax must be finite and +0 or more" "$bin" replay negative.json
    edited "$p1q" columns.json "d['inputs']['case']['base']['states'] = [['0x1p+0 0x3f800000'], ['0x1p+0 0x3f800000']]"
    refused "columns.json: .*an 8-bit case's states are its 'codes' and 'absmax'; its base's 'states' must be \[\]" "$bin" replay columns.json
    edited "$corpus/cases/P1-adam-f32-mutant.adam-eps-inside-sqrt-2bdecaf9cf6901c5.json" no-states.json "d['inputs']['case']['states'] = []"
    refused "no-states.json: .*adam has 2 states; 'states' must hold that many columns" "$bin" replay no-states.json
    edited "$p1q" typo.json "d['inputs']['case']['base']['zzz'] = 1"
    refused "typo.json: .*an optimizer case has no field 'zzz'" "$bin" replay typo.json
    p7=$(ls "$corpus"/cases/P7-dynamic8-signed-f32-64-mutant.stale-absmax-*.json)
    edited "$p7" label.json "d['dtype'] = 'f16'"
    refused "label.json: .*the case's inputs are of dtype \"f32\", but its 'dtype' says 'f16'" "$bin" replay label.json
    rank=$(ls "$corpus"/over-ranks/P11-fp32-step-adam-f32-zero-1-2-W1-mutant-checkpoint-step-not-restored-*.json)
    edited "$rank" args.json "d['arguments'] = ['sharded', '--mutant', 'checkpoint-padding-kept']"
    refused "args.json: \"arguments\" run mutant:checkpoint-padding-kept, but \"implementation\" says mutant:checkpoint-step-not-restored" \
      "$bin" replay args.json
    edited "$rank" worlds.json "d['case']['resume']['load_world'] = 5"
    refused "worlds.json: the case saves on 1 ranks and resumes on 5, more than its \"world_size\" 1; fix one of them" "$bin" replay worlds.json
    edited "$rank" resume-typo.json "d['case']['resume']['zzz'] = 1"
    refused "resume-typo.json: case: resume: the case has no field 'zzz'" "$bin" replay resume-typo.json
    edited "$p7" unread.json "d['inputs']['zzz'] = 1"
    refused "unread.json: the case has an input 'zzz', which property P7 never reads; remove it" "$bin" replay unread.json
    # Beside --case the advice was "add --property P11", which --case refuses ("drop --property").
    p10=$(ls "$corpus"/over-ranks/P10-storage-dynamic8-signed-u8-f32-fsdp1-flat-W2-mutant-storage-padding-from-wrong-end-*.json)
    refused "--checkpoint-dir is for P11; the --case file holds a P10 row; drop the option" "$bin" sharded --case "$p10" --checkpoint-dir ckpt
    # A line of junk was quoted whole (a page of message); 1e99999 gave nlohmann's code, no advice.
    python3 -c 'print("[\"" + "x" * 5000)' >junk.json
    refused "junk.json: not valid JSON (.*last read: '\"x*\.\.\.' ([0-9]* characters))" "$bin" replay junk.json
    [ "$(wc -c <out.txt)" -lt 400 ] || fail "the refusal of a line of junk is $(wc -c <out.txt) bytes"
    echo '{"schema": "bitparity.case/1", "blocksize": 1e99999}' >huge-number.json
    refused "huge-number.json: .*it holds a number too large for a double ('1e99999'); write a smaller one" "$bin" replay huge-number.json
    edited "$p1q" codez.json "d['inputs']['case']['codez'] = d['inputs']['case']['codes']"
    refused "codez.json: .*an 8-bit optimizer case has no field 'codez'" "$bin" replay codez.json
    # A --json link to a missing folder failed after the whole run (exit 3), not before it.
    ln -sf /proc/bitparity-none/target dangling.json
    refused "--json '/proc/bitparity-none/target': cannot make its folder" "$bin" check --suite quant --format nf4 --cases 1 --json dangling.json
    # One to a folder that can be made is written through, the folder made as for any --json.
    ln -sf made-by-link/out.json link.json
    "$bin" list --json link.json >out.txt 2>&1 && [ -s made-by-link/out.json ] && [ -L link.json ] || { cat out.txt; fail "a --json link to a new folder"; }
    edited "$p7" big-block.json "d['blocksize'] = 2**63"
    refused "big-block.json: 'blocksize': out of range: 9223372036854775808 is past 2.63 - 1" "$bin" replay big-block.json
    echo "ok: the fourth sweep's edits are refused, naming what is wrong"
    ;;
  sixth-sweep)
    # What the sixth sweep found accepted or unclear.
    sgd="$corpus/cases/P1-sgd-f32-mutant.sgd-nesterov-dropped-6c866640e0f5c687.json"
    edited "$sgd" grad-u8.json "d['inputs']['case']['grad_dtype'] = 'u8'"
    refused "grad-u8.json: .*'grad_dtype' is \"u8\"; parameters and gradients are f32, f16 or bf16" "$bin" replay grad-u8.json
    refused "grad-u8.json: .*'grad_dtype' is .u8." "$bin" replay --implementation cpu grad-u8.json
    edited "$sgd" property.json "d['property'] = 'P7'"
    refused "property.json: its 'property' P7 (suite quant) has no target 'sgd/f32': its 'entry' must be one of 'dynamic8-signed'" \
      "$bin" replay property.json
    p7=$(ls "$corpus"/cases/P7-dynamic8-signed-f32-64-mutant.stale-absmax-*.json)
    edited "$p7" block.json "d['blocksize'] = 3"
    refused "block.json: 'blocksize' 3 is not one of dynamic8-signed/f32's (64, 128, .*4096); fix it" "$bin" replay block.json
    # A stochastic-rounding case on a plugin (no stochastic rounding in the ABI) is not applicable, not a refused valid case.
    sr=$(ls "$corpus"/cases/P2-dynamic8-signed-f32-128-mutant.sr-global-counter-*.json)
    refused "nothing to check: none of the 1 cases applies (plugin:$faulty does not offer stochastic rounding, which the case draws)" \
      "$bin" replay --implementation "plugin:$faulty" "$sr"
    # A map's "bits" that is not a number was quoted whole.
    python3 -c 'import json; json.dump({"bits": list(range(256)), "values": ["0x%08x" % (0x3b800000 + i) for i in range(256)]}, open("bits.json", "w"))'
    refused "bits.json: \"bits\" says something other than a number but the list holds 256 values; write \"bits\": 8 or leave it out" \
      "$bin" check --suite quant --property P7 --cases 1 --map bits.json
    [ "$(wc -c <out.txt)" -lt 300 ] || fail "the refusal of a list of bits is $(wc -c <out.txt) bytes"
    # A corpus whose state file is a folder was blamed on --corpus, with advice to give a folder.
    mkdir -p state/fuzz-state.json
    refused "--corpus state: its fuzz state 'state/fuzz-state.json' is a folder, not a file; move it away" \
      "$bin" fuzz --budget 1s --suite quant --format nf4 --corpus state
    # Under a file-size limit the --json file failed, and the stdout line then said it was written.
    (ulimit -f 1; "$bin" check --suite quant --format nf4 --cases 1 --json fsz.json >stdout.txt 2>err.txt)
    code=$?
    [ "$code" -eq 3 ] && grep -q "cannot write 'fsz.json'" err.txt && ! grep -q "were written" err.txt ||
      { cat err.txt; fail "a file-size limit: exit $code, or a line saying the failed file was written"; }
    echo "ok: the sixth sweep's inputs are refused, naming what is wrong"
    ;;
  ninth-sweep)
    # What the ninth sweep found accepted: P13/P14 cases whose calls the property could not have drawn,
    # P14 labels not checked against its calls, calls a plugin declines, and filters --property ignores.
    "$bin" fuzz --suite quant --property P14 --format dynamic8-signed --dtype f32 --implementation mutant:code-map-cached-by-width \
      --budget 5s --seed 1 --corpus fuzzed >fuzz.txt 2>&1
    p14=$(ls fuzzed/cases/P14-*.json 2>/dev/null | head -n 1)
    [ -n "$p14" ] || { cat fuzz.txt; fail "the fuzz saved no P14 case"; }
    edited "$p14" out-u8.json "d['inputs']['case2']['out_dtype'] = 'u8'"
    refused "out-u8.json: .*out_dtype 'u8' is not a float dtype; use f32, f16 or bf16" "$bin" replay out-u8.json
    edited "$p14" block-100.json "d['inputs']['case2']['blocksize'] = 100"
    refused "block-100.json: .*block size 100 is not one .* takes; use one of" "$bin" replay block-100.json
    edited "$p14" entry.json "d['entry'] = 'nf4'"
    refused "entry.json: the case's inputs are \"dynamic8-signed\" inputs, but its 'entry' says 'nf4'" "$bin" replay entry.json
    edited "$p14" declined.json "d['inputs']['case2']['format'] = 'dynamic8-unsigned'"
    refused "nothing to check: none of the 1 cases applies (plugin:$faulty .*dynamic8-unsigned" \
      "$bin" replay --implementation "plugin:$faulty" declined.json
    refused "'nf4' is not in --suite optim8; it is in quant" "$bin" check --property P1q --format nf4 --cases 1
    refused "--map nf4: 'nf4' is a 4-bit map and the 8-bit optimizers' states take 8-bit maps" "$bin" check --property P1q --map nf4 --cases 1
    refused "'adam' is not in --suite quant" "$bin" check --property P14 --optimizer adam --cases 1
    echo "ok: the ninth sweep's inputs are refused, naming what is wrong"
    ;;
  eleventh-sweep)
    # A P1 or P1q case edited to hold an infinite or NaN gradient replayed as a kill of its mutant
    # (exit 0), and on cpu as "a finite gradient was reported non-finite".
    p1=$(ls "$corpus"/cases/P1-adam-f32-mutant.*.json | head -n 1)
    edited "$p1" inf-grad.json "d['inputs']['case']['grad'][0] = 'inf 0x7f800000'"
    refused "inf-grad.json: .*element 0 of the case's gradient is inf .*; P1 draws finite inputs" "$bin" replay inf-grad.json
    refused "inf-grad.json: .*P1 draws finite inputs" "$bin" replay --implementation cpu inf-grad.json
    edited "$p1" nan-param.json "d['inputs']['case']['param'][0] = 'nan 0x7fc00000'"
    refused "nan-param.json: .*element 0 of the case's parameter is nan" "$bin" replay nan-param.json
    # The twelfth: a P9o case whose gradient was made finite replayed as a kill (exit 0).
    p9o=$(ls "$corpus"/cases/P9o-*.json | head -n 1)
    edited "$p9o" finite-grad.json "d['inputs']['case']['grad'] = ['0x1p-1 0x3f000000'] * len(d['inputs']['case']['grad'])"
    refused "finite-grad.json: .*the case's gradient holds no NaN or Inf; P9o is about a step on a non-finite gradient" \
      "$bin" replay finite-grad.json
    echo "ok: the eleventh sweep's inputs are refused, naming what is wrong"
    ;;
  twelfth-sweep)
    # Saved cases edited outside their property's domain were judged: the correct cpu reported
    # wrong, a run that checked nothing passing, a mutant's refusal counted as a kill.
    adam="$corpus/cases/P1-adam-f32-mutant.adam-bias-correction-off-by-one-9a627ec01a04a066.json"
    edited "$adam" negative-square.json "d['inputs']['case']['states'][1][0] = '-0x1p+0 0xbf800000'"
    refused "negative-square.json: .*element 0 of the case's state exp_avg_sq is -0x1p+0 .*; it holds squares, so P1 draws it >= 0" \
      "$bin" replay --implementation cpu negative-square.json
    rmsprop=$(ls "$corpus"/cases/P1-rmsprop-f32-mutant.rmsprop-uncentered-*.json)
    edited "$rmsprop" wide-average.json "d['inputs']['case']['states'][1][0] = '-0x1p+0 0xbf800000'"
    refused "wide-average.json: .*state grad_avg is -0x1p+0 .*; its square exceeds the square average" "$bin" replay wide-average.json
    p2=$(ls "$corpus"/cases/P2-dynamic8-signed-f32-128-mutant.ignore-strides-*.json)
    edited "$p2" out-stride-0.json "d['inputs']['case']['out_layout']['strides'] = [0]"
    refused "out-stride-0.json: .*the output layout 'out_layout' reaches a storage element twice (strides \\[0\\])" \
      "$bin" replay --implementation cpu out-stride-0.json
    p2o=$(ls "$corpus"/cases/P2o-adam-f32-mutant.optim-ignore-strides-*.json)
    edited "$p2o" param-stride-0.json "d['inputs']['case']['param_layout']['strides'] = [2, 0]"
    refused "param-stride-0.json: .*the parameter's layout 'param_layout' reaches a storage element twice" "$bin" replay param-stride-0.json
    p7=$(ls "$corpus"/cases/P7-dynamic8-signed-f32-64-mutant.stale-absmax-*.json)
    edited "$p7" p7-nan.json "d['inputs']['values']['values'] = ['nan 0x7fc00000'] * len(d['inputs']['values']['values'])"
    refused "p7-nan.json: .*element 0 is nan .*; P7 draws finite values; a case with NaN or Inf blocks is P9's" \
      "$bin" replay --implementation "plugin:$faulty" p7-nan.json
    p8=$(ls "$corpus"/cases/P8-dynamic8-signed-f32-1024-mutant.*.json | head -n 1)
    edited "$p8" p8-off.json "d['inputs']['rounding']['enabled'] = False"
    refused "p8-off.json: .*the case's rounding is not enabled; P8 checks stochastic rounding" "$bin" replay --implementation cpu p8-off.json
    edited "$p8" p8-nan.json "d['inputs']['values']['values'][0] = 'nan 0x7fc00000'"
    refused "p8-nan.json: .*element 0 is nan .*; P8 draws finite values" "$bin" replay --implementation cpu p8-nan.json
    edited "$p8" p8-cut.json "d['inputs']['cut_blocks'] = 99999999999"
    refused "p8-cut.json: .*cut_blocks is 99999999999; the tensor has 1 blocks" "$bin" replay --implementation cpu p8-cut.json
    python3 - <<'PYTHON'
import json, struct
def bits(x): return struct.unpack("<I", struct.pack("<f", x))[0]
json.dump([bits(i / 255.0 - 1.0) for i in range(256)], open("non-positive.json", "w"))
PYTHON
    refused "--map non-positive.json: .* has no code above 0, and every 8-bit state takes positive values" \
      "$bin" check --suite optim8 --map non-positive.json --cases 1
    # A flag written as the list writes it was "not a finite number".
    "$bin" drift --optimizer sgd --steps 2 --elements 4 --set nesterov=true --set momentum=0.9 >out.txt 2>&1 &&
      grep -q "nesterov=1" out.txt || { cat out.txt; fail "--set nesterov=true was not taken"; }
    refused "--set lr=true: lr takes a number, not true or false" "$bin" drift --optimizer sgd --steps 2 --set lr=true
    # What a review of every property's generator against its decode found accepted.
    p9n=$(ls "$corpus"/cases/P9n-lamb-f32-mutant.*.json | head -n 1)
    edited "$p9n" no-nan.json "d['inputs']['case']['param'][0] = '0x1p+0 0x3f800000'"
    refused "no-nan.json: .*the case holds 0 NaN parameters; P9n steps a case with exactly one" "$bin" replay no-nan.json
    edited "$p9n" no-decay.json "d['inputs']['case']['hyperparameters']['weight_decay'] = '0x0p+0 0x00000000'"
    refused "no-decay.json: .*P9n steps lamb with adaptation and weight decay on" "$bin" replay --implementation cpu no-decay.json
    edited "$p2o" two-in-one.json "c = d['inputs']['case']; c['grad_layout']['strides'] = [2, 0]; c['grad'] = ['0x1p+0 0x3f800000', '0x1p-1 0x3f000000']"
    refused "two-in-one.json: .*grad element 1 is 0x1p-1 .* but shares storage element 0 of 'grad_layout' with element 0" \
      "$bin" replay --implementation cpu two-in-one.json
    p8u=$(ls "$corpus"/cases/P8u-dynamic8-signed-f32-*.json | head -n 1)
    edited "$p8u" p8u-bf16.json "d['dtype'] = 'bf16'"
    refused "p8u-bf16.json: .*is no bf16 value" "$bin" replay --implementation cpu p8u-bf16.json
    edited "$p7" p7-empty.json "d['inputs']['shape'] = [0]; d['inputs']['values']['values'] = []"
    refused "p7-empty.json: .*the case holds no values; P7 draws at least one" "$bin" replay --implementation cpu p7-empty.json
    p7d=$(ls "$corpus"/cases/P7d-fp4-*.json | head -n 1)
    edited "$p7d" minus-zero.json "d['inputs']['absmax']['values'] = ['-0x0p+0 0x80000000'] * len(d['inputs']['absmax']['values'])"
    refused "minus-zero.json: .*a block absmax must be finite and +0 or more, not -0x0p+0" "$bin" replay --implementation cpu minus-zero.json
    # What an implementation does not offer is not drawn for it: NaN inputs for one with no policy,
    # an output dtype its dequantize declines.
    edited "$p2" nan-input.json "i = d['inputs']['case']['input']; i['storage'] = ['nan 0x7fc00000'] * len(i['storage'])"
    standin="$(dirname "$faulty")/libbitparity_bitsandbytes_standin.so"
    adapter="$(dirname "$faulty")/libbitparity_bitsandbytes_plugin.so"
    if [ -f "$adapter" ] && [ -f "$standin" ]; then  # the ASan subset builds neither
      BITPARITY_BITSANDBYTES_LIBRARY="$standin" "$bin" replay --implementation "plugin:$adapter" nan-input.json >out.txt 2>&1
      code=$?
      [ "$code" -eq 2 ] && grep -q "INVALID: element 0 is nan .*declares no NaN and Inf policy" out.txt ||
        { cat out.txt; fail "a NaN input for a plugin with no policy: exit $code, not refused"; }
    fi
    echo "ok: the twelfth sweep's inputs are refused, naming what is wrong"
    ;;
  thirteenth-sweep)
    # A valid corpus case whose output dtype a plugin declines was "INVALID ... fix them": it is
    # not applicable there, as its row would be.
    p7=$(ls "$corpus"/cases/P7-dynamic8-signed-f32-64-mutant.stale-absmax-*.json)
    refused "nothing to check: none of the 1 cases applies (plugin:.* does not take f16)" \
      "$bin" replay --implementation "plugin:$faulty" "$p7"
    # A mutant that does not alter the case's optimizer "SURVIVES" there, saying nothing.
    adam="$corpus/cases/P1-adam-f32-mutant.adam-bias-correction-off-by-one-9a627ec01a04a066.json"
    refused "none of the 1 cases applies (mutant:lion-update-with-beta2 alters optim32 lion only, not this case's optim32 adam)" \
      "$bin" replay --implementation mutant:lion-update-with-beta2 "$adam"
    # An empty case holds, and a replay says that it could not have failed.
    edited "$adam" empty.json "c = d['inputs']['case']; l = dict(c['param_layout'], sizes=[0], storage_elements=0); c['shape'] = [0]; \
c['param_layout'] = c['grad_layout'] = l; c['state_layouts'] = [l] * len(c['state_layouts']); c['param'] = c['grad'] = []; \
c['states'] = [[] for _ in c['states']]"
    "$bin" replay --implementation cpu empty.json >out.txt 2>&1 &&
      grep -q "holds (not informative: the case has no elements" out.txt || { cat out.txt; fail "an empty case's replay"; }
    # A refused case counts one violation, not one per block size.
    BITPARITY_FAULTY_PLUGIN_REFUSES=1 "$bin" check --implementation "plugin:$faulty" --property P7 --format dynamic8-signed \
      --dtype f32 --cases 2 >out.txt 2>&1
    grep -q "^summary: 1 of 1 rows run, 1 failed, 1 violations" out.txt || { cat out.txt; fail "a refusal's violations"; }
    refused "--format names quantization formats, and P6 step optimizers only; give --optimizer, or add --property P2r or P10" \
      "$bin" sharded --property P6 --format nf4
    refused "--cases needs a value; give one after it" "$bin" check --cases
    refused "--cases was given no value (the next word, --property, is an option)" "$bin" check --cases= --property P7
    # With absmax 0 every map gives zeros: a zero of the wrong sign named one map ('nf4') as the cause.
    p7d=$(ls "$corpus"/cases/P7d-fp4-*.json | head -n 1)
    edited "$p7d" zero-absmax.json "d['inputs']['absmax']['values'] = ['0x0p+0 0x00000000'] * len(d['inputs']['absmax']['values']); \
d['inputs']['codes'] = [8] * len(d['inputs']['codes'])"
    "$bin" replay --implementation "plugin:$faulty" zero-absmax.json >out.txt 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "only the sign of zero differs" out.txt && ! grep -q "what map" out.txt ||
      { cat out.txt; fail "a zero-sign difference at absmax 0: exit $code"; }
    # A library loaded in-process that crashes ended its fuzz worker, and the campaign wrote itself
    # complete, with 0 visits, over an earlier complete file. It is a partial campaign: beside it.
    "$bin" fuzz --implementation "plugin:$faulty" --property P7 --format nf4 --visits 1 --corpus fz --json fz.json >out.txt 2>&1
    [ -f fz.json ] && cp fz.json fz-before.json || { cat out.txt; fail "the first fuzz run wrote no results"; }
    BITPARITY_FAULTY_PLUGIN_CRASHES=abort BITPARITY_PLUGIN_IN_PROCESS=1 "$bin" fuzz --implementation "plugin:$faulty" --property P7 \
      --format dynamic8-signed --budget 20s --corpus fz2 --json fz.json >out.txt 2>&1
    code=$?
    cmp -s fz.json fz-before.json && [ -f fz.partial.json ] &&
      python3 -c "import json; d = json.load(open('fz.partial.json')); assert d['complete'] is False" &&
      grep -q "results: fz.partial.json" out.txt && ! grep -q "results are lost" out.txt ||
      { cat out.txt; fail "fuzz after an in-process crash: exit $code"; }
    echo "ok: the thirteenth sweep's inputs are handled, each with a clear line"
    ;;
  fourteenth-sweep)
    # CLI11 reads "--" as the end of a list's values: the options after it still ran.
    refused "'--' ends the options only before file names, and bitparity check takes none" \
      "$bin" check --property P7 --format nf4 --dtype f32 -- --cases 3
    # "-" was a file named "-".
    refused "--json '-' would name a path called '-', not standard output" "$bin" check --property P7 --json -
    # An option of another command was only "not an option the command takes".
    refused "--storage f16; --storage is an option of bitparity sharded, not of check" "$bin" check --suite storage --storage f16
    # A reproduction replay does not know was taken without a word.
    adam="$corpus/cases/P1-adam-f32-mutant.adam-bias-correction-off-by-one-9a627ec01a04a066.json"
    edited "$adam" bogus.json "d['found']['reproduction'] = 'bogus'"
    refused "bogus.json: 'found.reproduction' is \"bogus\", not one of \"replays\", \"needs-earlier-calls\"" "$bin" replay bogus.json
    edited "$adam" found.json "d['found'] = 3"
    refused "found.json: 'found' must be an object" "$bin" replay found.json
    # JSON's -0 reads as a signed 0, and the message said "'next_visit' is 0, not a position from 0 on".
    mkdir -p c
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": -0, "runs": []}' >c/fuzz-state.json
    refused "'next_visit' is -0, not a position from 0 on (a whole number written without a sign or a point)" \
      "$bin" fuzz --corpus c --budget 1s
    # A rank case over NCCL on cpu ranks started mpirun, whose ranks refused it (exit 1).
    p2r=$(ls "$corpus"/over-ranks/P2r-fp32-step-adam-f32-chunk-all_gather-W2-mutant-optim-ignore-strides-*.json)
    edited "$p2r" nccl.json "d['arguments'] += ['--communicator', 'nccl']"
    refused "nccl.json: \"arguments\" name --communicator nccl, whose ranks are GPU ranks, and run mutant:optim-ignore-strides" \
      "$bin" replay nccl.json
    # Sweep 16. 8-bit options for an optimizer without 8-bit states were ignored (an fp32 plan, exit 0).
    refused "--block-size and --min-8bit-size shape 8-bit states, and lamb has none" \
      "$bin" state-plan --optimizer lamb --size 4096 --block-size 64
    # A state at 2^50 was refused naming --first-visit, which was not given; the refusal of a state
    # past it advised --first-visit N, which got the same refusal.
    mkdir -p s
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 1125899906842624, "runs": []}' >s/fuzz-state.json
    refused "the corpus state s/fuzz-state.json's next_visit 1125899906842624 with --visits 1 ends past visit 2^50" \
      "$bin" fuzz --suite conversions --visits 1 --corpus s
    echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 10000000000000000000, "runs": []}' >s/fuzz-state.json
    refused "is past 2^50, the last position --first-visit takes; give --first-visit N" "$bin" fuzz --suite conversions --visits 1 --corpus s
    "$bin" fuzz --property P7 --format nf4 --dtype f32 --first-visit 3 --visits 1 --budget 60s --corpus s >out.txt 2>&1 ||
      { cat out.txt; fail "--first-visit past a state beyond 2^50, as the refusal advises"; }
    # A repeated key showed nlohmann's tag: "[json.exception.other_error.598] key ...".
    sed 's/^{/{"property": "P1", /' "$adam" >twice.json
    refused "twice.json: key 'property' appears twice in one object; keep one; give a case file" "$bin" replay twice.json
    grep -q "json.exception" out.txt && { cat out.txt; fail "the library's tag is in the line"; }
    # A budget of 1e-9 s was shown as "0.000s", the value --seconds 0 is refused for, and the floor
    # of one batch per block size went unsaid.
    "$bin" check --property P7 --format nf4 --dtype f32 --seconds 1e-9 >out.txt 2>&1
    grep -q "budget 1e-09s" out.txt && grep -q "^budget: took .* every row runs at least one batch of cases per block size" out.txt ||
      { cat out.txt; fail "a budget of 1e-9 s"; }
    # Sweep 17. A plugin in its host never got a map read from a file: bitparity's own kernels through
    # the self plugin "failed" every such row with the refusal "unknown format 'ramp8'".
    self_plugin="$(dirname "$faulty")/libbitparity_self_plugin.so"
    if [ -f "$self_plugin" ]; then  # the ASan subset does not build it
      python3 -c 'import json, struct; print(json.dumps({"name": "ramp8", "values": ["0x%08x" % struct.unpack("<I", struct.pack("<f", (i - 127) / 128.0))[0] for i in range(256)]}))' >ramp8.json
      "$bin" check --implementation "plugin:$self_plugin" --property P7 --property P7d --map ramp8.json --dtype f32 --cases 1 >out.txt 2>&1 &&
        grep -q "^summary: 2 of 2 rows run, 0 failed" out.txt || { cat out.txt; fail "a --map file on a hosted plugin"; }
      "$bin" check --implementation "plugin:$self_plugin" --suite optim8 --optimizer adam --property P1q --map ramp8.json --cases 1 >out.txt 2>&1 &&
        grep -q "^summary: .* 0 failed" out.txt || { cat out.txt; fail "an 8-bit state map from a file on a hosted plugin"; }
    fi
    # Sweep 19. SIGTERM from outside to a plugin's host was a finding of the library ("crashed with
    # SIGTERM"), even for bitparity's own kernels.
    if [ -f "$self_plugin" ]; then
      "$bin" check --implementation "plugin:$self_plugin" --property P7 --format nf4 --dtype f32 --cases 4000 >out.txt 2>&1 &
      check=$!
      # The host that runs the cases (a first one may only load the plugin to read its descriptor).
      host=""
      sleep 1
      for _ in $(seq 1 200); do
        for pid in $(ps -o pid= --ppid "$check"); do
          [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = bitparity-plugi ] && host=$pid
        done
        [ -n "$host" ] && kill -TERM "$host" 2>/dev/null && break
        host=""
        sleep 0.1
      done
      [ -n "$host" ] || { kill "$check"; cat out.txt; fail "no plugin host"; }
      wait "$check"
      code=$?
      [ "$code" -eq 0 ] && grep -q "^note: .* ended with SIGTERM, a signal sent to the host from outside bitparity" out.txt ||
        { cat out.txt; fail "SIGTERM to a plugin host from outside: exit $code"; }
    fi
    # A JSON error from a map file or a case's dtype showed the library's tag or the code's name.
    printf '[1,2,' >trunc.json
    refused "trunc.json is not valid JSON (parse error" "$bin" check --property P7 --map trunc.json --dtype f32 --cases 1
    grep -q "json.exception" out.txt && { cat out.txt; fail "the library's tag is in the line"; }
    edited "$adam" f64.json "d['inputs']['case']['grad_dtype'] = 'f64'"
    refused "f64.json: .*'grad_dtype' is \"f64\"; parameters and gradients are f32, f16 or bf16" "$bin" replay f64.json
    # A tensor name that is not UTF-8 put a raw 0xFF byte into the error line.
    python3 - <<'PYTHON'
import struct
header = b'{"\xffw": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
open("raw-name.safetensors", "wb").write(struct.pack("<Q", len(header)) + header + b"\0" * 4)
PYTHON
    refused "raw-name.safetensors' is not a valid safetensors file: the header is not valid JSON .*\\\\xff" \
      "$bin" checkpoint inspect raw-name.safetensors
    LC_ALL=C grep -q "$(printf '\377')" out.txt && { cat -v out.txt; fail "a raw byte in the line"; }
    # A fuzz worker that a signal from outside stopped was neither restarted nor mentioned, and the
    # campaign called itself complete.
    "$bin" fuzz --property P7 --format nf4 --budget 12s --jobs 2 --corpus fw --json fw.json >out.txt 2>&1 &
    fuzz=$!
    worker=""
    for _ in $(seq 1 100); do
      for pid in $(ps -o pid= --ppid "$fuzz"); do
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--worker 0" && worker=$pid
      done
      [ -n "$worker" ] && break
      sleep 0.1
    done
    [ -n "$worker" ] || { kill "$fuzz"; cat out.txt; fail "no fuzz worker 0"; }
    sleep 2
    kill -TERM "$worker"
    wait "$fuzz"
    grep -q "^note: worker 0 was stopped by SIGTERM from outside this fuzz; .* this campaign is partial" out.txt &&
      python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["complete"] is False' fw.json ||
      { cat out.txt; fail "a fuzz worker stopped from outside"; }
    echo "ok: the fourteenth sweep's inputs are refused, each with a clear line"
    ;;
  third-sweep)
    # What a third sweep of about 960 inputs found.
    adam="$corpus/cases/P1-adam-f32-mutant.adam-bias-correction-off-by-one-9a627ec01a04a066.json"
    f16case=$(ls "$corpus"/cases/P7-dynamic8-signed-f16-256-mutant.dequantize-rounded-twice-*.json)
    # Nesting 200000 lists deep ended the process (SIGSEGV) while its message was made.
    python3 -c "open('deep.json','w').write('['*200000 + ']'*200000)"
    refused "deep.json: it nests lists and objects deeper than 64 levels" "$bin" check --suite quant --map deep.json --cases 1
    # dlopen of a FIFO blocked until a signal came.
    mkfifo fifo.so
    refused "fifo.so: a FIFO, not a file; give the path of a shared library" timeout 20 "$bin" check --suite quant --implementation "plugin:$PWD/fifo.so" --cases 1
    # A fingerprint that is not text was taken for none, and the edit behind it accepted.
    edit_case() {  # edit_case IN OUT PYTHON: the case with `c` edited
      python3 - "$1" "$2" "$3" <<'PYTHON'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"))
PYTHON
    }
    edit_case "$adam" fingerprint.json 'c["fingerprint"] = 5'
    refused "fingerprint.json: 'fingerprint' is 5, not the text bitparity wrote" "$bin" replay fingerprint.json
    # A value its dtype cannot hold ran, and the correct kernel was reported for it.
    edit_case "$f16case" f16.json 'del c["fingerprint"]; c["inputs"]["values"]["values"][2] = "0x1.000002p+0 0x3f800001"'
    refused "f16.json: .*0x1.000002p+0 0x3f800001 is no f16 value" "$bin" replay --implementation cpu f16.json
    edit_case "$adam" grad.json 'del c["fingerprint"]; c["inputs"]["case"]["grad_dtype"] = "f16"; c["inputs"]["case"]["grad"][0] = "0x1.000002p+0 0x3f800001"'
    refused "grad.json: .*grad element 0: 0x1.000002p+0 0x3f800001 is no f16 value" "$bin" replay --implementation cpu grad.json
    # The file's dtype and suite must be those of its inputs and property.
    edit_case "$adam" dtype.json 'del c["fingerprint"]; c["dtype"] = "f16"'
    refused "dtype.json: the case's inputs are of dtype \"f32\", but its 'dtype' says 'f16'" "$bin" replay dtype.json
    edit_case "$adam" suite.json 'c["suite"] = "quant"'
    refused "suite.json: 'suite' is \"quant\", but property P1 is of suite optim32" "$bin" replay suite.json
    # An empty value fell back to the default without a word.
    refused "--implementation: was given an empty value" "$bin" replay "$adam" --implementation ""
    refused "--checkpoint-dir: was given an empty value" "$bin" sharded --property P11 --checkpoint-dir ""
    # A *.json in a corpus that is no file was passed over without a word.
    mkdir -p corpus && cp "$adam" corpus/ && mkfifo corpus/zz.json
    refused "zz.json: a FIFO, not a file; move it out of the corpus" "$bin" replay corpus
    # --json over the plugin a replay loads destroyed the library.
    cp "$faulty" s.so
    refused "is the plugin" "$bin" replay "$adam" --implementation "plugin:$PWD/s.so" --json "$PWD/s.so"
    cmp -s s.so "$faulty" || fail "the plugin was overwritten"
    # A fuzz run that visited nothing passed ("0 visits", exit 0). A budget of 1 µs ends while the
    # units are planned (1 ms did not, once, on a fast machine).
    "$bin" fuzz --budget 0.000001s --corpus nothing >out.txt 2>&1
    code=$?
    [ "$code" -eq 1 ] && grep -q "^error: no visit ran, so nothing was checked: the budget of .* ended first" out.txt ||
      { cat out.txt; fail "a fuzz that checked nothing: exit $code"; }
    # A NUL in a map's name cut the message before its reason.
    python3 -c 'import json; print(json.dumps({"name": "ab\u0000cd", "values": [hex(0x3f800000 - i) for i in range(16)]}))' >nul-name.json
    refused "code map name 'ab.x00cd' is not usable; use 1 to 64 letters" "$bin" check --suite quant --map nul-name.json --cases 1
    # A name of 100000 characters made a message of 100000 characters.
    python3 -c 'import json; print(json.dumps({"name": "n" * 100000, "values": [hex(0x3f800000 - i) for i in range(16)]}))' >long-name.json
    refused "code map name 'n\{64\}\.\.\. (100000 characters)' is not usable" "$bin" check --suite quant --map long-name.json --cases 1
    [ "$(wc -c <out.txt)" -lt 400 ] || fail "the refusal of a long map name is $(wc -c <out.txt) bytes"
    # A run refused after its --json was checked left the folders made for that check behind.
    refused "no-such-case.json" "$bin" replay no-such-case.json --json made/deeper/out.json
    [ ! -e made ] || fail "a refused run left the folder made/ behind"
    "$bin" list --json made/deeper/out.json >out.txt 2>&1 && [ -s made/deeper/out.json ] || { cat out.txt; fail "list --json into new folders"; }
    # A result path with a newline broke the "results:" line in two.
    "$bin" list --json "$(printf 'new\nline.json')" >out.txt 2>&1 || { cat out.txt; fail "list --json with a newline in the path"; }
    grep -qx 'results: new\\nline.json' out.txt || { cat out.txt; fail "the results line does not escape the newline"; }
    # From the sweep after it: a NUL and junk after a document parsed as the document; an edited
    # entry or block size of an 8-bit step or a quantizer case ran under the new label; an f32 NaN
    # payload no f16 holds ran; a replay whose every case was skipped passed.
    { cat "$adam"; printf '\0garbage'; } >nul-junk.json
    refused "nul-junk.json: .*holds a NUL byte at byte [0-9]*, which no JSON text does" "$bin" replay nul-junk.json
    p1q=$(ls "$corpus"/cases/P1q-adam-f32-64-mutant.optim8-absmax-before-update-*.json)
    edit_case "$p1q" entry.json 'del c["fingerprint"]; c["entry"] = "sgd"'
    refused "entry.json: the case's inputs are \"adam\" inputs, but its 'entry' says 'sgd'" "$bin" replay entry.json
    edit_case "$p1q" blocks.json 'del c["fingerprint"]; c["blocksize"] = 128'
    refused "blocks.json: the case's inputs have block size 64, but its 'blocksize' says 128" "$bin" replay blocks.json
    edit_case "$f16case" nan.json 'del c["fingerprint"]; c["inputs"]["values"]["values"][0] = "nan 0x7fc00001"'
    refused "nan.json: .*is no f16 value" "$bin" replay --implementation cpu nan.json
    if ! "$bin" list | grep -q "^  cuda:0\$"; then
      edit_case "$adam" on-cuda.json 'del c["fingerprint"]; c["implementation"] = "cuda:0"'
      "$bin" replay on-cuda.json >out.txt 2>&1
      code=$?
      [ "$code" -eq 1 ] && grep -q "^error: every case was skipped (1, for want of their device), so nothing was checked" out.txt ||
        { cat out.txt; fail "a replay that skipped every case: exit $code"; }
    fi
    echo "ok: the third sweep's inputs are refused, not crashed on, hung on or run"
    ;;
  thirteenth-sweep-over-ranks)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    # A mutant that alters none of the selected rows "SURVIVED" there (exit 1), saying nothing.
    refused "mutant:lion-update-with-beta2 alters optim32 lion only, and no selected row runs that" \
      "$bin" sharded --implementation mutant:lion-update-with-beta2 --property P6 --optimizer adam --states 32
    refused "mutant:ignore-strides alters quant only, and no selected row runs that" \
      "$bin" sharded --rank-implementation 0=mutant:ignore-strides --property P6 --optimizer adam
    # A checkpoint the disk had no room for was a P11 failure of the implementation (exit 1).
    # (The limit is the ranks' alone: Open MPI's own setup fails under it.)
    mpirun -np 2 sh -c "ulimit -f 4 && exec \"$bin\" sharded --property P11 --optimizer adam --states 32 --dtype f32 --layout zero-3 \
      --cases 1 --checkpoint-dir ckd" >out.txt 2>&1
    code=$?
    [ "$code" -eq 3 ] && grep -q "^error: rank 0: a P11 checkpoint could not be written: .*; the run stopped there" out.txt &&
      ! grep -q "FAILED" out.txt || { cat out.txt; fail "a checkpoint with no room: exit $code"; }
    # A --json rank 0 could not write (a full disk) left the other ranks waiting in their next
    # collective until the stuck timer: every rank now finishes, and the run ends with exit 3.
    timeout 100 mpirun -np 2 sh -c "ulimit -f 4 && exec \"$bin\" sharded --property P2r --cases 1 --stuck-seconds 60 --json big.json" \
      >out.txt 2>&1
    code=$?
    [ "$code" -eq 3 ] && grep -q "^error: cannot write 'big.json'" out.txt || { cat out.txt; fail "a --json with no room over ranks: exit $code"; }
    # fuzz over ranks that could not save its state warned and exited 0; one process exits 3. The
    # limit is fuzz's alone: the launcher lifts it for mpirun, whose setup fails under it.
    printf '#!/bin/sh\nulimit -S -f unlimited\nexec mpirun "$@"\n' >launcher.sh && chmod +x launcher.sh
    (ulimit -S -f 0; BITPARITY_MPIRUN="$PWD/launcher.sh" timeout 100 "$bin" fuzz --suite storage --visits 1 --corpus fzs; echo "exit $?") 2>&1 |
      cat >out.txt
    grep -q "^exit 3$" out.txt && grep -q "^error: the fuzz state was not saved (cannot write .*fuzz-state-over-ranks.json" out.txt ||
      { cat out.txt; fail "fuzz over ranks with its state not saved"; }
    # CLI11 listed the words it did not take last first.
    refused "these words are not options or values the command takes: --json sp.json" "$bin" state-plan --optimizer sgd --size 10 --json sp.json
    # Sweep 18: a replay of cases over ranks on a plugin started mpirun for each, whose ranks refused
    # it (21 unexpected results, exit 1).
    refused "nothing to check: none of the 21 cases applies (a plugin runs in one process" \
      "$bin" replay "$corpus/over-ranks" --implementation "plugin:$faulty"
    # A skipped case was also said to be "not informative" (no elements, or lr 0), which it was not.
    "$bin" replay "$corpus"/cases/P1-adagrad-f32-mutant.adagrad-lr-decay-ignored-*.json \
      "$corpus"/cases/P2-dynamic8-signed-f32-128-mutant.ignore-strides-*.json --implementation mutant:ignore-strides >out.txt 2>&1
    grep -q "skipped: not applicable: mutant:ignore-strides alters quant only" out.txt && ! grep -q "not informative" out.txt ||
      { cat out.txt; fail "a skipped case was called not informative"; }
    echo "ok: the thirteenth sweep's inputs over ranks are handled, each with a clear line"
    ;;
  outside-signal-to-a-round)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    # SIGTERM to one rank of a fuzz round, from outside: the round stopped as asked, and fuzz called
    # it a failure of the cpu ("FAILED P10 on 5 ranks", exit 1) with a rerun command that passes.
    "$bin" fuzz --suite storage --budget 15s --seed 5 --first-visit 0 --corpus fz >out.txt 2>&1 &
    fuzz=$!
    descendants() {  # every process under $1
      local child
      for child in $(ps -o pid= --ppid "$1"); do echo "$child"; descendants "$child"; done
    }
    rank=""
    for _ in $(seq 1 300); do
      for pid in $(descendants "$fuzz"); do
        grep -qz "^OMPI_COMM_WORLD_RANK=" "/proc/$pid/environ" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = bitparity ] &&
          { rank=$pid; break; }
      done
      [ -n "$rank" ] && break
      sleep 0.1
    done
    [ -n "$rank" ] || { kill "$fuzz"; cat out.txt; fail "no rank of a round was found"; }
    kill -TERM "$rank"
    wait "$fuzz"
    code=$?
    [ "$code" -eq 0 ] && grep -q "^note: round [0-9]* (P10 on [0-9] ranks) was stopped from outside this fuzz (SIGTERM" out.txt &&
      ! grep -q "FAILED" out.txt || { cat out.txt; fail "SIGTERM to one rank of a round: exit $code"; }
    # SIGINT to a round's mpirun: it passes SIGTERM on to the ranks, which keep their rows and say so,
    # and exits 1; that too was "FAILED". The launcher notes its pid and the round's rows file, so
    # that the signal comes once the round has rows.
    printf '#!/bin/sh\nfor a in "$@"; do case "$a" in *rows.json) echo "$$ $a" >>launched.txt;; esac; done\nexec mpirun "$@"\n' >launcher.sh
    chmod +x launcher.sh
    BITPARITY_MPIRUN="$PWD/launcher.sh" "$bin" fuzz --suite sharded --budget 20s --seed 5 --first-visit 0 --corpus fz2 >out.txt 2>&1 &
    fuzz=$!
    signalled=""
    for _ in $(seq 1 300); do
      if [ -s launched.txt ]; then
        read -r launcher rows <<EOF2
$(tail -n 1 launched.txt)
EOF2
        [ -s "$rows" ] && kill -INT "$launcher" 2>/dev/null && { signalled=$launcher; break; }
      fi
      sleep 0.1
    done
    [ -n "$signalled" ] || { kill "$fuzz"; cat out.txt; fail "no round with rows was signalled"; }
    wait "$fuzz"
    code=$?
    [ "$code" -eq 0 ] && grep -q "^note: round [0-9]* .* was stopped from outside this fuzz" out.txt && ! grep -q "FAILED" out.txt ||
      { cat out.txt; fail "SIGINT to a round's mpirun: exit $code"; }
    # A fault that needs maps of its own (checkpoint-maps-not-restored) added them to the user's:
    # "--map dynamic8-signed-fused is given twice", though given once.
    "$bin" fuzz --suite resume --map dynamic8-signed-fused --map dynamic8-unsigned-fused \
      --implementation mutant:checkpoint-maps-not-restored --visits 1 --corpus fzm >out.txt 2>&1
    code=$?
    [ "$code" -ne 2 ] && ! grep -q "given twice" out.txt || { cat out.txt; fail "the user's maps with a fault that brings its own: exit $code"; }
    echo "ok: a round stopped from outside is said so, and is no failure"
    ;;
  rank-case-carries-maps)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    # A case over ranks found with --map FILE kept only the file's name: replayed in another folder it
    # was refused, or ran whatever file had that name there, without a word.
    python3 - <<'PYTHON'
import json, struct
def bits(x): return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]
json.dump({"name": "ramp8", "values": [bits((i - 127) / 128.0) for i in range(256)]}, open("ramp8.json", "w"))
json.dump({"name": "squares8", "values": [bits((i / 255.0) ** 2) for i in range(256)]}, open("squares8.json", "w"))
PYTHON
    "$bin" fuzz --suite resume --map ramp8.json --map squares8.json --implementation mutant:checkpoint-maps-not-restored \
      --budget 90s --stop-on-failure --seed 3 --first-visit 0 --corpus fz >out.txt 2>&1
    found=$(ls fz/over-ranks/*.json 2>/dev/null | head -n 1)
    [ -n "$found" ] || { cat out.txt; fail "fuzz saved no case over ranks"; }
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["code_maps"]; assert sorted(x["given"] for x in m) == ["ramp8.json", "squares8.json"], m' "$found" ||
      fail "the case does not carry its maps"
    mkdir elsewhere && cd elsewhere
    "$bin" replay "../$found" >../out.txt 2>&1 || { cat ../out.txt; fail "the case does not replay in a folder without its map files"; }
    grep -q "kills mutant:checkpoint-maps-not-restored" ../out.txt || { cat ../out.txt; fail "the replay elsewhere did not kill"; }
    cd ..
    edited "$found" no-maps.json "d.pop('code_maps')"
    refused "no-maps.json: .arguments. name the map ramp8.json, whose values the case does not carry" "$bin" replay no-maps.json
    echo "ok: a case over ranks carries the maps it was found with"
    ;;
  rank-case-refusal)
    # A rank case whose arguments the ranks refuse: the replay quoted mpirun's banner of dashes, not
    # bitparity's own error line.
    python3 - "$corpus"/over-ranks/P6-8-bit-step-adam-f32-zero-1-2-W2-mutant-sharded-padding-not-stripped-*.json <<'PYTHON'
import json, sys
case = json.load(open(sys.argv[1]))
case["arguments"] += ["--stuck-seconds", "-1"]
json.dump(case, open("refused.json", "w"))
PYTHON
    # Such a file is bad input: refused before any rank starts, naming the option (the run's refusal
    # was counted as an unexpected result, exit 1).
    refused "refused.json: .arguments. .*--stuck-seconds: must be a finite number of seconds" "$bin" replay refused.json
    python3 - "$corpus"/over-ranks/P6-8-bit-step-adam-f32-zero-1-2-W2-mutant-sharded-padding-not-stripped-*.json <<'PYTHON'
import json, sys
case = json.load(open(sys.argv[1]))
case["arguments"] += ["--steps", "1000"]
json.dump(case, open("steps.json", "w"))
PYTHON
    refused "steps.json: .arguments. .*--case holds its row, steps, worlds and values; drop --steps" "$bin" replay steps.json
    # A P10 case of 2 ranks run on 1 (no mpirun) checked other shards: its mutant "SURVIVED".
    p10=$(ls "$corpus"/over-ranks/P10-storage-dynamic8-signed-u8-f32-fsdp1-flat-W2-mutant-storage-padding-from-wrong-end-*.json)
    refused "was saved on 2 ranks, and this run has 1; run it with mpirun -np 2" "$bin" sharded --case "$p10" --mutant storage-padding-from-wrong-end
    echo "ok: a rank case whose arguments the ranks refuse is refused up front"
    ;;
  replay-interrupted)
    # A replay over ranks stopped by SIGTERM counted the case it cut as unexpected.
    "$bin" replay "$corpus/over-ranks" >out.txt 2>&1 &
    replay=$!
    for _ in $(seq 1 300); do pgrep -f "bitparity-replay-over-ranks" >/dev/null && break; sleep 0.1; done
    pgrep -f "bitparity-replay-over-ranks" >/dev/null || { cat out.txt; fail "no case over ranks started"; }
    kill -TERM "$replay"
    wait "$replay"
    code=$?
    cat out.txt
    [ "$code" -eq 143 ] || fail "an interrupted replay: exit $code, not 143"
    grep -q "not judged: interrupted by SIGTERM" out.txt || fail "the cut case is not said to be unjudged"
    grep -q "^replay: .* 0 unexpected, .*interrupted by SIGTERM" out.txt || fail "the cut case was counted"
    echo "ok: an interrupted replay judges nothing it cut"
    ;;
  *) fail "unknown case $case_name" ;;
esac
