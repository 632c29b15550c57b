#!/usr/bin/env python3
"""scripts/mma-corners.py: the host side of the corner vectors run through
the matrix instructions (backends/cuda/corners/mma_corners.cu).

  mma-corners.py input CORNERS.json OUT.in
      the vectors for mma_corners: every corner of CORNERS.json
      (tests/data/mmasim-corners/corners.json) plus NVIDIA analogues of the
      AMD corners that need a chain of instructions (named nv-*)
  mma-corners.py compare CORNERS.json RESULTS.txt --kcs KCS --profile P
                 [--cublas] [--json OUT.json]
      one line per (vector, instruction): the device's D[0][0] next to
      MMA-Sim's (where the vector was made for that instruction's
      architecture), kcs's emulation (`kcs exec --backend cpu --profile`,
      the device's nearest profile P and the entry's own profile), and with
      --cublas cuBLAS's (`kcs exec --backend cuda`, the vector in row 0 /
      column 0 of a 64 x 64 tile); then which model the hardware agrees with
      (bit for bit; any NaN agrees with any NaN, as payloads differ).
Exit status: 0 done, 2 bad input (a message names the file and field)."""
import json
import os
import struct
import subprocess
import sys
import tempfile

ENTRY_ARCH = {"h100": "Hopper", "v100": "Volta", "a100": "Ampere", "b200": "Blackwell",
              "mi100": "CDNA1", "mi250": "CDNA2", "mi300": "CDNA3"}
ENTRY_PROFILE = {"h100": "nvidia-h100", "v100": "nvidia-v100", "a100": "nvidia-a100",
                 "b200": "nvidia-b200", "mi100": "amd-mi100", "mi250": "amd-mi250",
                 "mi300": "amd-mi300"}
FMT = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp8_e4m3": "e4m3"}
KCS_DTYPE = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "e4m3": "fp8_e4m3"}


def die(msg):
    print("mma-corners: " + msg, file=sys.stderr)
    sys.exit(2)


def bf16_code(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    assert u & 0xFFFF == 0, x
    return u >> 16


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")
    if not isinstance(d, dict) or not isinstance(d.get("corners"), list):
        die(f"{path}: no 'corners' list")
    out = []
    for i, c in enumerate(d["corners"]):
        for field in ("title", "entry", "k", "a_format", "a", "b", "a_codes", "b_codes", "c",
                      "c_bits"):
            if field not in c:
                die(f"{path}: corner {i}: missing field '{field}'")
        fmt = FMT.get(c["a_format"])
        if fmt is None:
            die(f"{path}: corner {i}: a_format '{c['a_format']}' is not one the instructions take")
        k = int(c["k"])
        if len(c["a_codes"]) != k or len(c["b_codes"]) != k:
            die(f"{path}: corner {i}: a_codes/b_codes do not hold k = {k} codes")
        out.append({"name": f"{c['entry']}.{i}", "title": c["title"], "entry": c["entry"],
                    "fmt": fmt, "k": k, "a": [float.fromhex(x) for x in c["a"]],
                    "b": [float.fromhex(x) for x in c["b"]], "a_codes": c["a_codes"],
                    "b_codes": c["b_codes"], "c": float.fromhex(c["c"]),
                    "c_bits": int(c["c_bits"], 16),
                    "mmasim": int(c["mmasim_d_bits"], 16) if c.get("mmasim_d_bits") else None})
    # NVIDIA analogue of the AMD 'Inf between blocks' corner: a first
    # instruction whose sum overflows fp32 (2^200), a second one adding -2^200
    a = [0.0] * 32
    b = [0.0] * 32
    a[0], b[0], a[16], b[16] = 2.0 ** 100, 2.0 ** 100, -(2.0 ** 100), 2.0 ** 100
    out.append({"name": "nv-inf-chain", "title": "Inf between instructions: +2^200 in the "
                "first k-slice, -2^200 in the second (bf16, chained)", "entry": "nv",
                "fmt": "bf16", "k": 32, "a": a, "b": b, "a_codes": [bf16_code(x) for x in a],
                "b_codes": [bf16_code(x) for x in b], "c": 0.0, "c_bits": 0, "mmasim": None})
    return out


def cmd_input(args):
    if len(args) != 2:
        die("usage: input CORNERS.json OUT.in")
    vecs = load(args[0])
    if os.path.exists(args[1]):
        die(f"{args[1]} exists (not overwritten)")
    with open(args[1] + ".part", "w") as f:
        for v in vecs:
            f.write(f"{v['name']} {v['fmt']} {v['k']} {v['c_bits']:08x} " +
                    " ".join(f"{x:x}" for x in v["a_codes"] + v["b_codes"]) + "\n")
    os.replace(args[1] + ".part", args[1])
    print(f"mma-corners: {len(vecs)} vectors in {args[1]}")


def f32_bits(x):
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return 0x7F800000 if x > 0 else 0xFF800000


def kcs_exec(kcs, v, backend, profile, tile, tmp):
    """D[0][0] bits of `kcs exec gemm` for vector v, or a short reason."""
    m = n = tile
    k = v["k"]
    A = [0.0] * (m * k)
    B = [0.0] * (k * n)
    C = [0.0] * (m * n)
    A[:k] = v["a"]
    for i in range(k):
        B[i * n] = v["b"][i]
    C[0] = v["c"]
    files = {}
    for name, arr in (("a", A), ("b", B), ("c", C)):
        files[name] = os.path.join(tmp, f"{name}.f64")
        with open(files[name], "wb") as f:
            f.write(struct.pack(f"<{len(arr)}d", *arr))
    out = os.path.join(tmp, "d.f64")
    if os.path.exists(out):
        os.remove(out)
    cmd = [kcs, "exec", "gemm", "--backend", backend, "--dtype-in", KCS_DTYPE[v["fmt"]],
           "-m", str(m), "-n", str(n), "-k", str(k), "--a", files["a"], "--b", files["b"],
           "--c", files["c"], "--out", out]
    if profile:
        cmd += ["--profile", profile]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    with open(out, "rb") as f:
        d = struct.unpack(f"<{m * n}d", f.read())
    return f32_bits(d[0]), None


def same(a, b):
    """Bitwise equal, or both NaN (NaN payloads differ between devices and
    simulators; a NaN against a NaN counts as agreement)."""
    if a is None or b is None:
        return False
    nan = lambda x: (x & 0x7F800000) == 0x7F800000 and (x & 0x7FFFFF) != 0
    return a == b or (nan(a) and nan(b))


def fmt_bits(b):
    if b is None:
        return "-"
    x = struct.unpack("<f", struct.pack("<I", b))[0]
    return f"0x{b:08x} ({x:.9g})"


def cmd_compare(args):
    import argparse
    ap = argparse.ArgumentParser(prog="mma-corners.py compare")
    ap.add_argument("corners")
    ap.add_argument("results")
    ap.add_argument("--kcs", required=True)
    ap.add_argument("--profile", required=True, help="the device's nearest kcs profile")
    ap.add_argument("--device-arch", default="Hopper",
                    help="the device's architecture as MMA-Sim names it (Ampere, Hopper, "
                         "Blackwell): MMA-Sim's answer applies where the entry's is the same")
    ap.add_argument("--cublas", action="store_true")
    ap.add_argument("--json")
    o = ap.parse_args(args)
    vecs = {v["name"]: v for v in load(o.corners)}
    rows = []
    try:
        lines = open(o.results).read().splitlines()
    except OSError as e:
        die(f"{o.results}: {e}")
    for ln, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 4 or parts[0] not in vecs:
            die(f"{o.results}:{ln}: expected 'name instruction status d_bits' with a known name")
        name, inst, status, dbits = parts
        if status not in ("ok", "unsupported", "layout-failed"):
            die(f"{o.results}:{ln}: unknown status '{status}'")
        if status == "ok":
            try:
                dev = int(dbits, 16)
            except ValueError:
                die(f"{o.results}:{ln}: d_bits '{dbits}' is not hexadecimal")
        else:
            dev = None
        rows.append((vecs[name], inst, status, dev))
    if not rows:
        die(f"{o.results}: no results")
    out = []
    cublas_done = {}
    with tempfile.TemporaryDirectory() as tmp:
        for v, inst, status, dev in rows:
            fam = v["entry"].split("-")[0]
            ms = v["mmasim"] if ENTRY_ARCH.get(fam) == o.device_arch else None
            kp, kerr = kcs_exec(o.kcs, v, "cpu", o.profile, 1, tmp)
            ep = ENTRY_PROFILE.get(fam)
            ke, keerr = (kcs_exec(o.kcs, v, "cpu", ep, 1, tmp) if ep and ep != o.profile
                         else (kp, kerr))
            cb = None
            if o.cublas and v["name"] not in cublas_done:
                cublas_done[v["name"]] = kcs_exec(o.kcs, v, "cuda", None, 64, tmp)
            if o.cublas:
                cb = cublas_done[v["name"]][0]
            agrees = []
            if dev is not None:
                if same(dev, ms):
                    agrees.append("mmasim")
                if same(dev, kp):
                    agrees.append("kcs:" + o.profile)
                if ep and ep != o.profile and same(dev, ke):
                    agrees.append("kcs:" + ep)
                if same(dev, cb):
                    agrees.append("cublas")
            out.append({"vector": v["name"], "title": v["title"], "instruction": inst,
                        "status": status, "device": dev, "mmasim": v["mmasim"],
                        "mmasim_applies": ms is not None, "kcs_profile": o.profile,
                        "kcs": kp, "kcs_error": kerr, "entry_profile": ep, "kcs_entry": ke,
                        "kcs_entry_error": keerr, "cublas": cb,
                        "agrees_with": agrees})
    for r in out:
        print(f"{r['vector']}: {r['title']}")
        print(f"  {r['instruction']}: {r['status']} {fmt_bits(r['device'])}")
        print(f"    MMA-Sim {fmt_bits(r['mmasim'])}"
              f"{'' if r['mmasim_applies'] else ' (made for another architecture)'}")
        print(f"    kcs {r['kcs_profile']} {fmt_bits(r['kcs']) if r['kcs'] is not None else r['kcs_error']}")
        if r["entry_profile"] and r["entry_profile"] != r["kcs_profile"]:
            print(f"    kcs {r['entry_profile']} "
                  f"{fmt_bits(r['kcs_entry']) if r['kcs_entry'] is not None else r['kcs_entry_error']}")
        if o.cublas:
            print(f"    cuBLAS (64x64 tile) {fmt_bits(r['cublas'])}")
        if r["device"] is not None:
            print(f"    hardware agrees with: {', '.join(r['agrees_with']) or 'none of them'}")
    if o.json:
        if os.path.exists(o.json):
            die(f"{o.json} exists (not overwritten)")
        with open(o.json + ".part", "w") as f:
            json.dump(out, f, indent=1)
        os.replace(o.json + ".part", o.json)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("input", "compare"):
        die("usage: mma-corners.py input|compare ... (see the top of this file)")
    (cmd_input if sys.argv[1] == "input" else cmd_compare)(sys.argv[2:])


if __name__ == "__main__":
    main()
