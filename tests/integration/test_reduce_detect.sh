#!/usr/bin/env bash
# kcs detect + kcs reduce on its dataset: detection curves by error
# injection into a conforming fp32 GEMM, judged by every detector.
# Checks what holds by construction: the oracle verdict never flags a
# conforming implementation, never detects an error far below eta and
# always detects one far above it; the rigorous Freivalds check has no
# false alarm; the output digest flags every other conforming
# implementation (bitwise differences are not errors); the bf16
# accumulator is not conforming.
source "$(dirname "$0")/lib.sh"
{
  study_head detection-test 5 16 C-PRC-01
  own_ranks sequential/fp32 pairwise/fp32 sequential/fp64 sequential/bf16
  cat <<EOF
cases:
  - contract: C-PRC-01
    op: gemm
    dtype_in: fp32
    shapes: [[32, 32, 256], [32, 32, 2048]]
    inputs: [normal]
    trials: 2
EOF
} > "$T/det.yaml"
"$KCS" detect "$T/det.yaml" -o "$T/det.h5" --trials 40 --magnitudes 9 --inputs 2 -q
[ -s "$T/det.h5" ] || fail "no det.h5"
# an existing output is not replaced without --force
set +e
"$KCS" detect "$T/det.yaml" -o "$T/det.h5" -q 2> "$T/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "kcs detect over an existing file exited $rc"
"$KCS" reduce "$T/det.h5" -o "$T/rep" -q
grep -q "kcs detection report" "$T/rep/report.md" || fail "no detection report"
grep -q "smallest magnitude at ≥ 99 %" "$T/rep/report.md" || fail "report lacks the summary"
[ -s "$T/rep/detection.csv" ] || fail "no detection.csv"
[ -s "$T/rep/tolerances.json" ] || fail "no tolerances.json in the detection report"
grep -q "Clopper–Pearson" "$T/rep/report.md" || fail "false alarms without intervals"
"$PYTHON" - "$T/det.h5" <<'PY'
import sys
import h5py
import numpy as np

s = lambda x: x.decode() if isinstance(x, bytes) else x
f = h5py.File(sys.argv[1], "r")
assert s(f.attrs["content"]) == "detection"
d = f["analysis/detection"][:]
fa = f["analysis/detection_false_alarms"][:]
sm = f["analysis/detection_summary"][:]
det = np.array([s(x) for x in d["detector"]])
kind = np.array([s(x) for x in d["kind"]])
# mechanisms (no injected magnitude): inputs coerced to bf16 on every input
# set, a stale row from the second input set on. The oracle sees the stale
# row; whether it sees the coercion depends on the contract's eta (C-PRC-01's
# backward-error eta at k = 2048 admits it), the digest always does
mech = d[np.isnan(d["magnitude"])]
mkind = np.array([s(x) for x in mech["kind"]])
mdet = np.array([s(x) for x in mech["detector"]])
assert sorted(set(mkind)) == ["coerce-bf16", "stale-row"], set(mkind)
for case in (0, 1):
    c = mech["case_id"] == case
    assert np.all(mech[c & (mkind == "coerce-bf16")]["trials"] == 2)
    assert np.all(mech[c & (mkind == "stale-row")]["trials"] == 1)
    assert np.all(mech[c & (mdet == "oracle") & (mkind == "stale-row")]["p_detect"] == 1.0)
    assert np.all(mech[c & (mdet == "digest")]["p_detect"] == 1.0)
    assert np.all(mech[c]["magnitude_data"] > 0)
for row in mech[mdet == "oracle"]:
    print("case %d mechanism %-12s size %.3g of the row: oracle detects %.2f"
          % (row["case_id"], s(row["kind"]), row["magnitude_data"], row["p_detect"]))
keep = ~np.isnan(d["magnitude"])
d, det, kind = d[keep], det[keep], kind[keep]
assert len(d) == 2 * 6 * 3 * 9, len(d)
assert np.all(d["trials"] == 40)
mags = np.unique(d["magnitude"])
assert len(mags) == 9 and abs(mags[0] - 0.01) < 1e-12 and abs(mags[-1] - 100) < 1e-9
for case in (0, 1):
    for k in ("single", "dense", "row"):
        o = d[(d["case_id"] == case) & (det == "oracle") & (kind == k)]
        o = o[np.argsort(o["magnitude"])]
        assert o["p_detect"][0] == 0.0 and o["p_detect"][-1] == 1.0, o["p_detect"]
        assert np.all(np.diff(o["p_detect"]) >= -0.1), o["p_detect"]
        fr = d[(d["case_id"] == case) & (det == "freivalds-rig") & (kind == k)]
        assert fr[np.argmax(fr["magnitude"])]["p_detect"] == 1.0
# one axis in units of the data: every detector judged the same injections
for case in (0, 1):
    for k in ("single", "dense", "row"):
        q = d[(d["case_id"] == case) & (kind == k)]
        for mag in np.unique(q["magnitude"]):
            md = q[q["magnitude"] == mag]["magnitude_data"]
            assert np.all(md == md[0]), md
        o = q[det[(d["case_id"] == case) & (kind == k)] == "oracle"]
        o = o[np.argsort(o["magnitude"])]
        big = o["magnitude"] >= 1
        assert np.all(o["magnitude_data"][big] > 0), o["magnitude_data"]
        assert np.all(np.diff(o["magnitude_data"][big]) > 0), o["magnitude_data"]
fdet = np.array([s(x) for x in fa["detector"]])
conf = fa[(fa["conforming"] == 1)]
cdet = np.array([s(x) for x in conf["detector"]])
assert set(conf["rank"]) == {0, 1, 2, 3}, set(conf["rank"])
assert np.all(fa[(fa["rank"] == 4)]["conforming"] == 0)       # bf16 accumulator
assert conf[cdet == "oracle"]["flagged"].sum() == 0
assert conf[cdet == "freivalds-rig"]["flagged"].sum() == 0
dg = conf[cdet == "digest"]
assert dg[dg["rank"] == 0]["flagged"].sum() == 0               # the reference itself
assert np.all(dg[dg["rank"] != 0]["flagged"] == dg[dg["rank"] != 0]["outputs"])
smd = np.array([s(x) for x in sm["detector"]])
assert np.all(sm[smd == "oracle"]["usable"] == 1)
assert np.all(sm[smd == "digest"]["usable"] == 0)
o99 = sm[smd == "oracle"]["min_magnitude_99"]
assert np.all((o99 >= 0.5) & (o99 <= 10)), o99
for row in sm:
    print("case %d %-16s %-6s false alarms %d/%d, >= 99%% from %s x eta"
          % (row["case_id"], s(row["detector"]), s(row["kind"]), row["fa_flagged"],
             row["fa_outputs"], row["min_magnitude_99"]))
print("detect: python checks ok")
PY
echo "reduce_detect: ok"
