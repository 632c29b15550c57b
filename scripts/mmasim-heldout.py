#!/usr/bin/python3
"""Generate the held-out MMA-Sim vector set (tests/data/mmasim-heldout/).

Usage (not run in CI; needs PyTorch and a checkout of MMA-Sim):

    /usr/bin/python3 scripts/mmasim-heldout.py --mmasim /path/to/MMA-Sim \
        [--seed 90511] [--out tests/data/mmasim-heldout] [--only ID,ID]
    /usr/bin/python3 scripts/mmasim-heldout.py --mmasim /path/to/MMA-Sim --reproduce-shipped

The second form checks the harness: it reruns MMA-Sim on the inputs of the
shipped set (tests/data/mmasim, made by another generator) and counts the
outputs it reproduces bit for bit.

MMA-Sim (https://github.com/microsoft/MMA-Sim, MIT licence) is imported from
--mmasim (a checkout of commit c78513835c8b2ae61b35062afce4c4255bc6901c) and
run on fresh random inputs for every entry of tests/data/mmasim/index.json
that kcs maps to a profile, except the block-scaled ones (see the README this
script writes). The inputs are drawn here, independently of the shipped set:
same instruction, same input categories, another seed and smaller blocks
(8x8 single-instruction blocks, 4x4 chained ones) so that the set stays
under 1.5 MB. Output format: the one of tests/data/mmasim (index.json plus
one .bin per entry).

Adaptations to run MMA-Sim c785138 with PyTorch 1.13 (no MMA-Sim file is
changed; everything is done from outside, here):
  * torch 1.13 has no float8 / uint16 / uint32 dtypes. The float8 names are
    bound to placeholder objects before MMA-Sim is imported, so that its
    instruction classes pick the fp8 code paths from the qualifier as
    published; the fp8 operands are then handed over exactly in bfloat16 (A
    and B of one format) or A in bfloat16 and B in float16 (mixed formats),
    and MMA-Sim's table of smallest exponents (dtype_min_exponent, the only
    place where it uses the operand type in its arithmetic) is given the fp8
    format's smallest exponent for that holder type while the entry runs.
    torch.uint16/uint32 (used only to build a NaN output) become int16/int32.
  * CDNA1/CDNA2 fp16/bf16: MMA-Sim's pairwise_dot accepts only fp32, so its
    operands are converted exactly to fp32 before that routine (the subnormal
    flush before it still sees the original type).
  * The instruction object's m and n are set to the block's rows and columns
    (every output of MMA-Sim depends only on its own row of A, column of B and
    element of C, so this only skips padded outputs).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MIN_EXP = {"fp8_e4m3": -6, "fp8_e5m2": -14, "fp8_e4m3fnuz": -7, "fp8_e5m2fnuz": -15}


def load_mmasim(path):
    import torch
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float8_e4m3fnuz",
                 "float8_e5m2fnuz"):
        if not hasattr(torch, name):
            setattr(torch, name, type(name, (), {"__repr__": lambda s, n=name: "torch." + n})())
    if not hasattr(torch, "uint32"):
        torch.uint32 = torch.int32
    if not hasattr(torch, "uint16"):
        torch.uint16 = torch.int16
    sys.path.insert(0, path)
    import mmasim.simulator.amd as sim_amd
    import mmasim.simulator.arithmetic as arith
    import mmasim.simulator.nv_ptx as sim_nv
    orig_pw = sim_amd.pairwise_dot

    def pairwise_fp32(a, b, flush=False):
        return orig_pw(a.float(), b.float(), flush)

    sim_amd.pairwise_dot = pairwise_fp32
    return torch, arith, {"mma": sim_nv.mma, "wgmma": sim_nv.wgmma,
                          "tcgen05mma": sim_nv.tcgen05mma, "mfma": sim_amd.mfma}


# ---- number formats: table of every finite encoding -----------------------

def fp8_table(ebits, mbits, bias, fnuz):
    codes, vals = [], []
    for c in range(256):
        s, e, m = c >> 7, (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
        if fnuz and c == 0x80:
            continue
        if not fnuz:
            if ebits == 5 and e == 31:
                continue
            if ebits == 4 and e == 15 and m == (1 << mbits) - 1:
                continue
        v = (m / (1 << mbits)) * 2.0 ** (1 - bias) if e == 0 else \
            (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        codes.append(c)
        vals.append(-v if s else v)
    return np.array(codes, np.uint64), np.array(vals)


def table(fmt):
    if fmt == "fp16":
        c = np.arange(1 << 16, dtype=np.uint16)
        v = c.view(np.float16).astype(np.float64)
    elif fmt == "bf16":
        c = np.arange(1 << 16, dtype=np.uint32)
        v = (c << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    elif fmt == "tf32":
        c = (np.arange(1 << 19, dtype=np.uint32) << 13).astype(np.uint32)
        v = c.view(np.float32).astype(np.float64)
    elif fmt == "fp8_e4m3":
        return fp8_table(4, 3, 7, False)
    elif fmt == "fp8_e5m2":
        return fp8_table(5, 2, 15, False)
    elif fmt == "fp8_e4m3fnuz":
        return fp8_table(4, 3, 8, True)
    elif fmt == "fp8_e5m2fnuz":
        return fp8_table(5, 2, 16, True)
    else:
        raise SystemExit("format %s not handled" % fmt)
    ok = np.isfinite(v)
    return c[ok].astype(np.uint64), v[ok]


class Fmt:
    def __init__(self, name):
        self.name = name
        self.codes, self.vals = table(name)
        pos = self.vals > 0
        self.pos = self.vals[pos]
        self.exp = np.floor(np.log2(self.pos)).astype(int)
        self.emax = int(self.exp.max())
        mn = {"fp16": -14, "bf16": -126, "tf32": -126}
        self.emin = mn.get(name, MIN_EXP.get(name))
        self.code_of = {float(v): int(c) for c, v in zip(self.codes, self.vals)}
        self.code_of[0.0] = int(self.codes[np.where((self.vals == 0) &
                                                    ~np.signbit(self.vals))[0][0]])

    def pick(self, rng, size, lo, hi, sub=False):
        """random values with exponent in [lo, hi] (or subnormal), random sign"""
        sel = (self.exp < self.emin) if sub else (self.exp >= lo) & (self.exp <= hi)
        cand = self.pos[sel]
        v = rng.choice(cand, size=size)
        return np.where(rng.random(size) < 0.5, -v, v)

    def any(self, rng, size):
        return rng.choice(self.vals, size=size)

    def neighbour(self, v):
        """the next encoding away from zero (one ulp)"""
        a = self.pos
        i = np.searchsorted(a, abs(v))
        w = a[min(i + 1, len(a) - 1)]
        return math.copysign(w, v)


# ---- categories ------------------------------------------------------------

def gen_ab(cat, fa, fb, rng, m, n, k):
    wide_lo = lambda f: (-60, 60) if f.name in ("bf16", "tf32") else (f.emin, f.emax)
    if cat == "normal":
        return fa.pick(rng, (m, k), -3, 3), fb.pick(rng, (k, n), -3, 3)
    if cat == "wide":
        return fa.pick(rng, (m, k), *wide_lo(fa)), fb.pick(rng, (k, n), *wide_lo(fb))
    if cat in ("subnormal",):
        def sn(f, shape):
            x = np.where(rng.random(shape) < 0.5, f.pick(rng, shape, 0, 0, sub=True),
                         f.pick(rng, shape, f.emin, f.emin + 2))
            return np.where(rng.random(shape) < 0.06, 0.0, x)
        return sn(fa, (m, k)), sn(fb, (k, n))
    if cat == "submix":
        return fa.pick(rng, (m, k), 0, 0, sub=True), fb.pick(rng, (k, n), fb.emax - 1, fb.emax)
    if cat == "cancel":
        h = k // 2
        A = fa.pick(rng, (m, k), -3, 3)
        B = fb.pick(rng, (k, n), -3, 3)
        A[:, h:2 * h] = -A[:, :h]
        B[h:2 * h, :] = B[:h, :]
        nudge = rng.random((m, h)) < 0.1
        for i, l in zip(*np.nonzero(nudge)):
            A[i, h + l] = fa.neighbour(A[i, h + l])
        return A, B
    if cat == "align":
        top = min(fa.emax - 1, 12)
        span = max(1, min(24, top - fa.emin))
        A = np.zeros((m, k))
        for i in range(m):
            d = rng.integers(1, span + 1, size=k)
            A[i] = [fa.pick(rng, 1, top - dd, top - dd)[0] for dd in d]
            A[i, rng.integers(0, k)] = fa.pick(rng, 1, top, top)[0]
        return A, fb.pick(rng, (k, n), 0, 1)
    if cat == "zeros":
        A = np.where(rng.random((m, k)) < 0.35, 0.0, fa.pick(rng, (m, k), -3, 3))
        B = np.where(rng.random((k, n)) < 0.35, 0.0, fb.pick(rng, (k, n), -3, 3))
        return A, B
    if cat == "zerobig":
        z = rng.random(k) < 0.3
        z[rng.integers(0, k)] = True
        A = fa.pick(rng, (m, k), -10, 0)
        A[:, z] = 0.0
        B = fb.pick(rng, (k, n), -10, 0)
        B[z, :] = fb.pick(rng, (int(z.sum()), n), fb.emax - 2, fb.emax)
        return A, B
    if cat == "tiny":
        if fa.name in ("bf16", "tf32"):
            return fa.pick(rng, (m, k), -80, -64), fb.pick(rng, (k, n), -80, -64)
        def small(f, shape):
            return np.where(rng.random(shape) < 0.5, f.pick(rng, shape, 0, 0, sub=True),
                            f.pick(rng, shape, f.emin, f.emin + 1))
        return small(fa, (m, k)), small(fb, (k, n))
    if cat == "randbits":
        return fa.any(rng, (m, k)), fb.any(rng, (k, n))
    raise ValueError(cat)


def round_c(x, cfmt):
    with np.errstate(over="ignore"):
        y = float(np.float16(x)) if cfmt == "fp16" else float(np.float32(x))
    return y if math.isfinite(y) else 0.0


def ulps(x, steps, cfmt):
    t = np.float16 if cfmt == "fp16" else np.float32
    y = t(x)
    for _ in range(abs(steps)):
        y = np.nextafter(y, t(np.inf) if steps > 0 else t(-np.inf))
    return float(y) if math.isfinite(float(y)) else 0.0


def gen_c(cat, A, B, cfmt, rng):
    m, n = A.shape[0], B.shape[1]
    C = np.zeros((m, n))
    sub_top = -14 if cfmt == "fp16" else -126
    sub_bits = 10 if cfmt == "fp16" else 23
    for i in range(m):
        for j in range(n):
            with np.errstate(over="ignore", invalid="ignore"):
                s = math.fsum(A[i, :] * B[:, j])
            if not math.isfinite(s):
                s = 0.0
            subn = math.copysign(int(rng.integers(1, 1 << sub_bits)) * 2.0 ** (sub_top - sub_bits),
                                 rng.random() - 0.5)
            if cat == "cancel":
                r = 4
            elif cat == "tiny":
                r = (1, 2, 3, 4)[rng.integers(0, 4)]
            else:
                r = int(rng.integers(0, 6))
            if r == 0:
                c = round_c(s * 2.0 ** int(rng.integers(-30, 31)), cfmt)
            elif r == 1:
                c = 0.0
            elif r == 2:
                c = -0.0
            elif r == 3:
                c = subn
            elif r == 4:
                c = ulps(-s, int(rng.integers(-3, 4)), cfmt)
            else:
                c = round_c(rng.standard_normal() * 2.0 ** int(rng.integers(-20, 21)), cfmt)
            C[i, j] = c
    return C


# ---- running MMA-Sim -------------------------------------------------------

def enc(fmt, vals):
    v = np.asarray(vals, np.float64)
    if fmt == "fp32":
        return v.astype(np.float32).view(np.uint32).astype("<u4")
    if fmt == "tf32":
        return v.astype(np.float32).view(np.uint32).astype("<u4")
    if fmt == "fp16":
        return v.astype(np.float16).view(np.uint16).astype("<u2")
    if fmt == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype("<u2")
    f = FMTS[fmt]
    out = np.zeros(v.shape, "|u1")
    for idx, x in np.ndenumerate(v):
        x = float(x)
        if x == 0:
            out[idx] = 0x80 if math.copysign(1, x) < 0 and "fnuz" not in fmt else 0
        else:
            out[idx] = f.code_of[x]
    return out


FMTS = {}


def holder(torch, fmt, second):
    if fmt in ("fp16",):
        return torch.float16
    if fmt == "bf16":
        return torch.bfloat16
    if fmt in ("tf32", "fp32"):
        return torch.float32
    return torch.float16 if second else torch.bfloat16


def run_entry(torch, arith, classes, e, rng, args):
    fa, fb = Fmt(e["a_format"]), Fmt(e["b_format"])
    FMTS[fa.name], FMTS[fb.name] = fa, fb
    call = e["mmasim_call"]
    inst = classes[call["class"]](call["arch"], call["qualifier"])
    mixed = e["a_format"] != e["b_format"]
    ha = holder(torch, e["a_format"], False)
    hb = holder(torch, e["b_format"], mixed)
    saved = dict(arith.dtype_min_exponent)
    if e["a_format"] in MIN_EXP:
        arith.dtype_min_exponent[ha] = MIN_EXP[e["a_format"]]
    if e["b_format"] in MIN_EXP:
        arith.dtype_min_exponent[hb] = MIN_EXP[e["b_format"]]
    inst.a_type, inst.b_type = ha, hb
    ct = torch.float16 if e["c_format"] == "fp16" else torch.float32
    ki = e["instruction_mnk"][2]
    cats = ["normal", "wide", "subnormal", "submix", "cancel", "align", "zeros", "zerobig",
            "tiny", "randbits"]
    chained = [c for c in cats if c not in ("submix", "randbits")]
    blob, blocks = bytearray(), []
    plan = [(c, False) for c in cats] + [(c, True) for c in chained]
    for cat, ch in plan:
        ninst = int(rng.integers(4, 9)) if ch else 1
        m, n, k = (4, 4, ki * ninst) if ch else (8, 8, ki)
        A, B = gen_ab(cat, fa, fb, rng, m, n, k)
        if "fnuz" not in e["a_format"]:  # some zeros of A negative (fnuz has no -0)
            A = np.where((A == 0) & (rng.random(A.shape) < 0.3), -0.0, A)
        C = gen_c(cat, A, B, e["c_format"], rng)
        inst.m, inst.n = m, n
        tA = torch.tensor(A, dtype=torch.float64).to(ha)
        tB = torch.tensor(B, dtype=torch.float64).to(hb)
        tC = torch.tensor(C, dtype=torch.float64).to(ct)
        assert np.array_equal(tA.double().numpy(), A) and np.array_equal(tB.double().numpy(), B)
        D = tC
        for s in range(ninst):
            D = inst(tA[:, s * ki:(s + 1) * ki].contiguous(),
                     tB[s * ki:(s + 1) * ki, :].contiguous(), D)
        if e["d_format"] == "fp16":
            Dbits = D.view(torch.int16).numpy().view(np.uint16).astype("<u2")
        else:
            Dbits = D.view(torch.int32).numpy().view(np.uint32).astype("<u4")
        arrays = {}
        for name, arr in (("A", enc(e["a_format"], A)), ("B", enc(e["b_format"], B)),
                          ("C", enc(e["c_format"], C)), ("D", Dbits)):
            arrays[name] = {"offset": len(blob), "dtype": arr.dtype.str, "shape": list(arr.shape)}
            blob += arr.tobytes()
        blocks.append({"category": cat, "chained": ch, "n_instructions": ninst, "m": m, "n": n,
                       "k": k, "arrays": arrays})
    arith.dtype_min_exponent.clear()
    arith.dtype_min_exponent.update(saved)
    return blob, blocks


def decode(fmt, raw):
    if fmt in ("fp32", "tf32"):
        return raw.view(np.float32).astype(np.float64)
    if fmt == "fp16":
        return raw.view(np.float16).astype(np.float64)
    if fmt == "bf16":
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    f = Fmt(fmt)
    lut = {int(c): v for c, v in zip(f.codes, f.vals)}
    return np.array([lut[int(x)] for x in raw.ravel()]).reshape(raw.shape)


def reproduce(torch, arith, classes, e, data):
    """Rerun MMA-Sim through this script's harness on the inputs of a shipped
    entry (tests/data/mmasim) and count the outputs reproduced bit for bit:
    the check that the PyTorch 1.13 adaptations change nothing."""
    blob = open(os.path.join(data, e["file"]), "rb").read()
    call = e["mmasim_call"]
    inst = classes[call["class"]](call["arch"], call["qualifier"])
    mixed = e["a_format"] != e["b_format"]
    ha = holder(torch, e["a_format"], False)
    hb = holder(torch, e["b_format"], mixed)
    saved = dict(arith.dtype_min_exponent)
    if e["a_format"] in MIN_EXP:
        arith.dtype_min_exponent[ha] = MIN_EXP[e["a_format"]]
    if e["b_format"] in MIN_EXP:
        arith.dtype_min_exponent[hb] = MIN_EXP[e["b_format"]]
    inst.a_type, inst.b_type = ha, hb
    ct = torch.float16 if e["c_format"] == "fp16" else torch.float32
    ki = e["instruction_mnk"][2]
    same = total = 0
    for b in e["blocks"]:
        arr = {}
        for name, a in b["arrays"].items():
            arr[name] = np.frombuffer(blob, np.dtype(a["dtype"]), a["shape"][0] * a["shape"][1],
                                      a["offset"]).reshape(a["shape"])
        inst.m, inst.n = b["m"], b["n"]
        tA = torch.tensor(decode(e["a_format"], arr["A"])).to(ha)
        tB = torch.tensor(decode(e["b_format"], arr["B"])).to(hb)
        D = torch.tensor(decode(e["c_format"], arr["C"])).to(ct)
        for s in range(b["n_instructions"]):
            D = inst(tA[:, s * ki:(s + 1) * ki].contiguous(),
                     tB[s * ki:(s + 1) * ki, :].contiguous(), D)
        if e["d_format"] == "fp16":
            Db = D.view(torch.int16).numpy().view(np.uint16)
        else:
            Db = D.view(torch.int32).numpy().view(np.uint32)
        same += int((Db == arr["D"]).sum())
        total += Db.size
    arith.dtype_min_exponent.clear()
    arith.dtype_min_exponent.update(saved)
    return same, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmasim", required=True, help="checkout of MMA-Sim c785138")
    ap.add_argument("--seed", type=int, default=90511)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/data/mmasim-heldout"))
    ap.add_argument("--only", default="", help="comma-separated entry ids")
    ap.add_argument("--reproduce-shipped", action="store_true",
                    help="instead: rerun the shipped set's inputs (tests/data/mmasim) and "
                    "count the outputs reproduced bit for bit (exit 1 if any is not)")
    args = ap.parse_args()
    torch, arith, classes = load_mmasim(args.mmasim)
    src = json.load(open(os.path.join(ROOT, "tests/data/mmasim/index.json")))
    only = set(filter(None, args.only.split(",")))
    if args.reproduce_shipped:
        bad = 0
        for e in src["entries"]:
            if e.get("scale_format") is None and (not only or e["id"] in only):
                same, total = reproduce(torch, arith, classes, e,
                                        os.path.join(ROOT, "tests/data/mmasim"))
                print("%s: %d of %d reproduced" % (e["id"], same, total), flush=True)
                bad += total - same
        sys.exit(1 if bad else 0)
    os.makedirs(args.out, exist_ok=True)
    out = {k: v for k, v in src.items() if k != "entries"}
    out["what"] = ("MMA-Sim outputs on a second, independently drawn input set kept apart "
                   "from tests/data/mmasim (held out)")
    out["seed"] = args.seed
    out["entries"] = []
    todo = [e for e in src["entries"] if e.get("scale_format") is None]
    for idx, e in enumerate(src["entries"]):
        if e not in todo or (only and e["id"] not in only):
            continue
        rng = np.random.default_rng([args.seed, idx])
        print("[%d/%d] %s" % (idx + 1, len(src["entries"]), e["id"]), file=sys.stderr, flush=True)
        blob, blocks = run_entry(torch, arith, classes, e, rng, args)
        rec = {k: v for k, v in e.items() if k not in ("blocks", "bytes", "n_dot_products")}
        rec["bytes"] = len(blob)
        rec["n_dot_products"] = sum(b["m"] * b["n"] for b in blocks)
        rec["blocks"] = blocks
        tmp = os.path.join(args.out, e["file"] + ".tmp")
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, os.path.join(args.out, e["file"]))
        out["entries"].append(rec)
    with open(os.path.join(args.out, "index.json.tmp"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
    os.replace(os.path.join(args.out, "index.json.tmp"), os.path.join(args.out, "index.json"))


if __name__ == "__main__":
    main()
