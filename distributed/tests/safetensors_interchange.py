#!/usr/bin/env python3
"""Interchange with the reference safetensors implementation (Python's `safetensors` with torch).

  safetensors_interchange.py BITPARITY FOLDER

1. Files written by Python's safetensors open in bitparity: `checkpoint inspect` lists every tensor
   with the CRC-32 of exactly the bytes Python wrote (zlib's CRC-32 is the same polynomial).
2. Files written by bitparity open in Python: every tensor of a P11 checkpoint loads, its bytes
   match the CRC-32 in bitparity's header, and the metadata reads as strings.
3. A bitparity checkpoint re-saved by Python (its own tensor order and header layout) still passes
   `checkpoint inspect`.
Exit 77 (skipped) where Python lacks safetensors or torch.
"""
import json
import os
import re
import subprocess
import sys
import zlib

try:
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file
except ImportError as missing:
    print(f"skipped: Python's safetensors with torch is not installed here ({missing})")
    sys.exit(77)

bitparity, folder = sys.argv[1], sys.argv[2]
os.makedirs(folder, exist_ok=True)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def raw(tensor):
    return tensor.contiguous().view(torch.uint8).numpy().tobytes() if tensor.numel() else b""


def inspect(path):
    run = subprocess.run([bitparity, "checkpoint", "inspect", path], capture_output=True, text=True, env=env)
    rows = {}
    for line in run.stdout.splitlines():
        match = re.match(r"\s+(\S+)\s+(\S+)\s+(\[.*?\])\s+(\d+)\s+([0-9a-f]{8})\s+(\S+)$", line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(5), match.group(6))
    return run.returncode, rows, run.stdout + run.stderr


failures = []
# 1. Python writes, bitparity reads.
python_file = os.path.join(folder, "written_by_python.safetensors")
tensors = {
    "f32": torch.arange(-3, 9, dtype=torch.float32).reshape(3, 4) / 7,
    "bf16": torch.linspace(-2, 2, 10).to(torch.bfloat16),
    "f16": torch.tensor([float("inf"), -0.0, 6.1e-5, float("nan")], dtype=torch.float16),
    "u8": torch.arange(0, 256, dtype=torch.uint8),
    "i64": torch.tensor([1 << 40, -5], dtype=torch.int64),
    "empty": torch.zeros(0, 3),
}
save_file(tensors, python_file, metadata={"written_by": "python safetensors", "step": "3"})
code, rows, text = inspect(python_file)
if code != 0:
    failures.append(f"bitparity refused a file Python wrote (exit {code}):\n{text}")
for name, tensor in tensors.items():
    expected = format(zlib.crc32(raw(tensor)) & 0xFFFFFFFF, "08x")
    if name not in rows or rows[name][1] != expected:
        failures.append(f"{name}: bitparity read crc32 {rows.get(name)}, Python wrote bytes with {expected}")

# 2. bitparity writes, Python reads.
ckpt = os.path.join(folder, "p11")
subprocess.run(["mpirun", "-np", "2", bitparity, "sharded", "--property", "P11", "--optimizer", "adam", "--layout", "zero-3",
                "--all-world-pairs", "--checkpoint-dir", ckpt, "--seed", "9"], check=True, env=env, stdout=subprocess.DEVNULL)
written = [os.path.join(root, f) for root, _, files in os.walk(ckpt) for f in files if f.endswith(".safetensors")]
if not written:
    failures.append("P11 wrote no checkpoint files")
for path in written:
    with safe_open(path, framework="pt") as f:
        metadata = f.metadata()
        crc = json.loads(metadata["crc32"])
        if metadata.get("format") != "bitparity.checkpoint/1":
            failures.append(f"{path}: Python reads format {metadata.get('format')!r}")
        for name in f.keys():
            got = format(zlib.crc32(raw(f.get_tensor(name))) & 0xFFFFFFFF, "08x")
            if crc.get(name) != got:
                failures.append(f"{path}: Python reads {name} with crc32 {got}, bitparity wrote {crc.get(name)}")
    # 3. Re-saved by Python in its own layout: still a valid checkpoint for bitparity.
    with safe_open(path, framework="pt") as f:
        resaved = {name: f.get_tensor(name) for name in f.keys()}
        metadata = f.metadata()
    copy = path + ".python.safetensors"
    save_file(resaved, copy, metadata=metadata)
    code, _, text = inspect(copy)
    if code != 0:
        failures.append(f"{copy}: bitparity refuses the checkpoint Python re-saved (exit {code}):\n{text}")

for failure in failures:
    print("FAILED:", failure)
print(f"{len(tensors)} Python-written tensors, {len(written)} bitparity checkpoint files checked both ways:",
      "ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
