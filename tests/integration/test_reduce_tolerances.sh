#!/usr/bin/env bash
# Recommended tolerances end to end (issue 17's acceptance):
#  - a calibration study of conforming fp32 GEMMs (k = 64 ... 16384, 32x32
#    outputs, 4 implementations) gives tolerances.json (schema checked, the
#    power form's points on c n^alpha u, the held-out counts with their
#    Clopper-Pearson intervals recomputed independently);
#  - `kcs reduce NEW.h5 --tolerances FILE --json` on a second study (other
#    seed, other k, 64x64 outputs) flags no trial of the conforming ranks
#    and every trial of the 16- and 18-bit accumulators; the per-case
#    judgement is recomputed in Python from the file's documented rule and
#    the dataset's /results;
#  - a malformed tolerances file is refused with file:line:col and exit 2.
source "$(dirname "$0")/lib.sh"
sed -e "s#\.\./\.\./contracts#$KCS_SRC/contracts#" "$KCS_SRC/tests/studies/tol_calib.yaml" > "$T/calib.yaml"
sed -e "s#\.\./\.\./contracts#$KCS_SRC/contracts#" "$KCS_SRC/tests/studies/tol_judge.yaml" > "$T/judge.yaml"
OPENBLAS_NUM_THREADS=1 "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe \
    -x OPENBLAS_NUM_THREADS "$KCS" run "$T/calib.yaml" -o "$T/calib.h5" -q
OPENBLAS_NUM_THREADS=1 "$MPIEXEC" -n 6 --allow-run-as-root --oversubscribe \
    -x OPENBLAS_NUM_THREADS "$KCS" run "$T/judge.yaml" -o "$T/judge.h5" -q

"$KCS" reduce "$T/calib.h5" -o "$T/cal" -q --no-plots
[ -s "$T/cal/tolerances.json" ] || fail "no tolerances.json"
[ -s "$T/cal/tolerance_model.csv" ] || fail "no tolerance_model.csv"
# the report leads with the held-out figures
first=$(grep -m1 -n "^## " "$T/cal/report.md" | cut -d: -f2-)
[ "$first" = "## Recommended tolerances, judged out of sample" ] || fail "report leads with '$first'"

"$KCS" reduce "$T/judge.h5" -o "$T/jud" --no-plots --tolerances "$T/cal/tolerances.json" --json \
    > "$T/judged.json"
grep -q "## Judged with given tolerances" "$T/jud/report.md" || fail "no judged section"
[ -s "$T/jud/judged.csv" ] && [ -s "$T/jud/judged_cases.csv" ] || fail "no judged CSV"
[ -s "$T/jud/tolerances.json" ] || fail "the judged dataset's report has no tolerances.json"

"$PYTHON" - "$T/cal/tolerances.json" "$T/judged.json" "$T/judge.h5" "$T/jud/judged_cases.csv" <<'PY'
import csv, json, math, sys
import h5py
import numpy as np

tol = json.load(open(sys.argv[1]))
assert tol["format"] == "kcs-tolerances" and tol["version"] == 1, tol
assert tol["generated_by"].startswith("kcs "), tol["generated_by"]
p = tol["false_alarm_target"]
assert p == 0.01 and tol["datasets"], tol
recs = tol["recommendations"]
assert len(recs) == 1, recs
r = recs[0]
for key in ("op", "dtype_in", "dtype_out", "acc", "metric", "form", "u", "c", "alpha",
            "alpha_ci", "envelope", "valid", "outputs_rule", "torch", "heldout", "insample"):
    assert key in r, key
assert (r["op"], r["dtype_in"], r["dtype_out"], r["acc"]) == ("gemm", "fp32", "fp32", "fp32"), r
assert r["metric"] == "scaled" and r["outputs_rule"] == "log_power", r
# one output count (32x32): the growth in N cannot be fitted; the exponent
# is the exponential tail's, and the file says so
assert r["outputs_exponent"] == 1.0 and r["outputs_exponent_basis"].startswith("assumed"), r
assert r["valid"]["outputs_max"] == r["valid"]["outputs_fitted"] == 1024, r["valid"]
assert r["heldout_outputs"] == [] and any("not validated out of sample in N" in w
                                          for w in r["warnings"]), r["warnings"]
# eta0 is recommended at the upper bootstrap bound: never below the point fit
assert r["recommended_basis"].startswith("upper 95"), r["recommended_basis"]
assert r["eta0_boot_lo"] <= r["eta0_boot_hi"] and r["c"] >= r["c_fit"] * (1 - 1e-12), r
assert abs(r["c"] / r["c_fit"] - max(1.0, r["eta0_boot_hi"])) < 1e-9, r
assert r["form"] in ("power", "envelope"), r["form"]
assert abs(r["u"] - 2.0 ** -24) < 1e-20, r["u"]
v = r["valid"]
assert (v["n_min"], v["n_max"], v["outputs_fitted"]) == (64, 16384, 1024), v
assert v["implementations"] == 4 and v["ranks"] == 4 and v["trials"] == 4 * 9 * 8, v
lo, hi = r["alpha_ci"]
assert lo < r["alpha"] < hi, r
env = r["envelope"]
assert [e[0] for e in env] == [64 * 2 ** i for i in range(9)], env
if r["form"] == "power":  # the form is the fitted exponent
    for n, e in env:
        assert abs(e / (r["c"] * n ** r["alpha"] * r["u"]) - 1) < 1e-6, (n, e)
# every recommended eta0 lies above the largest conforming divergence at n
for (n, e), (n2, m) in zip(env, r["observed_max"]):
    assert n == n2 and e > m, (n, e, m)

def cp(k, n, conf=0.95):
    a = 1 - conf
    try:
        from scipy.stats import beta
        return (0.0 if k == 0 else beta.ppf(a / 2, k, n - k + 1),
                1.0 if k == n else beta.ppf(1 - a / 2, k + 1, n - k))
    except ImportError:  # closed forms at the ends only
        assert k in (0, n)
        return ((0.0, 1 - (a / 2) ** (1 / n)) if k == 0 else ((a / 2) ** (1 / n), 1.0))

try:
    import scipy  # noqa: F401
    have_scipy = True
except ImportError:
    have_scipy = False
for name in ("heldout", "insample", "heldout_implementations"):
    h = r[name]
    assert h["trials"] == v["trials"] and h["not_judged"] == 0, (name, h)
    assert abs(h["rate"] - h["flagged"] / h["trials"]) < 1e-12
    if have_scipy or h["flagged"] in (0, h["trials"]):
        clo, chi = cp(h["flagged"], h["trials"])
        assert abs(h["ci95"][0] - clo) < 1e-6 and abs(h["ci95"][1] - chi) < 1e-6, (name, h, clo, chi)
print("held out (trial split): %d/%d  [%.4f, %.4f]" % (r["heldout"]["flagged"], r["heldout"]["trials"],
                                                        *r["heldout"]["ci95"]))
print("held out (leave one implementation out): %d/%d" % (r["heldout_implementations"]["flagged"],
                                                          r["heldout_implementations"]["trials"]))
assert r["insample"]["flagged"] == 0, r["insample"]
tp = r["torch"]
assert tp["outputs"] == 1024 and len(tp["points"]) == 9, tp
for (n, e), (n2, rtol, atol) in zip(env, tp["points"]):
    assert n == n2 and rtol == 1.3e-6 and atol > e, (n, rtol, atol)

# the judgement: conforming ranks never flagged, the narrow accumulators always
j = json.load(open(sys.argv[2]))
# the judged cases have 64x64 outputs, beyond the 32x32 the file validates:
# the --json output carries the warning
assert any("N beyond its validated output counts (N from 4096 to 4096)" in w
           for w in j["warnings"]), j.get("warnings")
by = {x["rank"]: x for x in j["judged"]}
assert len(by) == 6, j
for rank in range(4):
    assert by[rank]["trials"] == 12 and by[rank]["flagged"] == 0, by[rank]
    assert by[rank]["extrapolated"] == 0 and by[rank]["not_judged"] == 0, by[rank]
for rank in (4, 5):
    assert "bits:1" in by[rank]["implementation"], by[rank]
    assert by[rank]["trials"] == 12 and by[rank]["flagged"] == 12, by[rank]

# recompute every case's eta and flags from the file and /results
def eta(n, N):
    xs = [e[0] for e in env]
    assert xs[0] <= n <= xs[-1]
    if r["form"] == "power":
        e0 = r["c"] * n ** r["alpha"] * r["u"]
    else:
        i = max(i for i in range(len(xs) - 1) if xs[i] <= n)
        t = math.log(n / xs[i]) / math.log(xs[i + 1] / xs[i])
        e0 = math.exp(math.log(env[i][1]) + t * (math.log(env[i + 1][1]) - math.log(env[i][1])))
    N0 = v["outputs_fitted"]
    return e0 * max(1.0, (math.log(2 * N / p) / math.log(2 * N0 / p)) ** r["outputs_exponent"])

f = h5py.File(sys.argv[3], "r")
cases = f["cases"][:]
res = f["results"][:]
rows = {(int(x["case_id"]), int(x["rank"])): x for x in csv.DictReader(open(sys.argv[4]))}
for c in cases:
    e = eta(float(c["k"]), float(c["m"] * c["n"]))
    for rank in range(6):
        sel = res[(res["case_id"] == c["case_id"]) & (res["rank"] == rank)]
        flagged = int(np.sum(~(sel["max_scaled"] <= e)))
        row = rows[(int(c["case_id"]), rank)]
        assert abs(float(row["eta"]) / e - 1) < 1e-5, (row, e)
        assert int(row["flagged"]) == flagged and int(row["trials"]) == len(sel), (row, flagged)
print("judged: python recomputation agrees on %d (case, rank) rows" % len(rows))
PY

# malformed tolerances: file:line:col: field: message, exit status 2
sed -e 's/"form": "[a-z]*"/"form": "cubic"/' "$T/cal/tolerances.json" > "$T/bad.json"
set +e
"$KCS" reduce "$T/judge.h5" -o "$T/bad" --no-plots --tolerances "$T/bad.json" -q 2> "$T/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "malformed tolerances: exit $rc"
grep -qE "bad.json:[0-9]+:[0-9]+: recommendations\[0\]\.form: 'cubic' is not a form" "$T/err" ||
  fail "message: $(cat "$T/err")"
# a tolerance asked outside its scope says so on stderr, stating the scope
# (issue 42): k outside its validity range, an absolute metric on other inputs
"$PYTHON" - "$T/cal/tolerances.json" "$T/narrow.json" "$T/otherscale.json" <<'PY'
import json, sys
tol = json.load(open(sys.argv[1]))
narrow = json.loads(json.dumps(tol))
for r in narrow["recommendations"]:
    r["valid"]["n_max"] = r["valid"]["n_min"]  # every larger k is outside
json.dump(narrow, open(sys.argv[2], "w"))
other = json.loads(json.dumps(tol))
for r in other["recommendations"]:
    r["metric"], r["inputs"] = "abs", "no_such_inputs"
json.dump(other, open(sys.argv[3], "w"))
PY
"$KCS" reduce "$T/judge.h5" -o "$T/narrow" --no-plots --tolerances "$T/narrow.json" -q \
    2> "$T/narrow.err" || fail "reduce with a narrowed tolerances file: $(cat "$T/narrow.err")"
grep -qE "kcs reduce: warning: .*narrow.json: the tolerance for op [a-z_]+, dtype_in [a-z0-9]+, dtype_out [a-z0-9]+, acc [a-z0-9]+ \(metric [a-z]+; valid for k in \[[0-9]+, [0-9]+\] and N in \[[0-9]+, [0-9]+\] outputs, .*\): [0-9]+ trials with k outside its validity range" \
  "$T/narrow.err" || fail "no scope warning for k outside the validity range: $(cat "$T/narrow.err")"
"$KCS" reduce "$T/judge.h5" -o "$T/cal2" --no-plots --tolerances "$T/cal/tolerances.json" -q \
    2> "$T/inscope.err"
! grep -q "warning" "$T/inscope.err" || {
  # the judged study's k or N may exceed the calibration's: then the warning is due
  "$PYTHON" - "$T/cal/tolerances.json" "$T/judge.h5" <<'PY' || fail "a warning with every k in range: $(cat "$T/inscope.err")"
import json, sys, h5py
tol = json.load(open(sys.argv[1]))
hi = max(r["valid"]["n_max"] for r in tol["recommendations"])
lo = min(r["valid"]["n_min"] for r in tol["recommendations"])
nmax = max(r["valid"]["outputs_max"] for r in tol["recommendations"])
with h5py.File(sys.argv[2], "r") as f:
    ks = set(int(k) for k in f["cases"]["k"])
    ns = set(int(m) * int(n) for m, n in zip(f["cases"]["m"], f["cases"]["n"]))
assert any(k < lo or k > hi for k in ks) or any(n > nmax for n in ns), (lo, hi, sorted(ks), nmax)
PY
}
"$KCS" reduce "$T/judge.h5" -o "$T/other" --no-plots --tolerances "$T/otherscale.json" -q \
    2> "$T/other.err" || fail "reduce with an absolute tolerances file: $(cat "$T/other.err")"
grep -q "metric abs; .*absolute, at the scale of its inputs: no_such_inputs.* trials on other inputs (.*) were judged with an absolute tolerance fitted at another input scale" \
  "$T/other.err" || fail "no input-scale warning: $(cat "$T/other.err")"

# --query: one recommendation at k for N outputs, with its scope; a warning
# on stderr outside it (the first recommendation of the calibration's file)
"$PYTHON" - "$T/cal/tolerances.json" > "$T/q.args" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["recommendations"][0]
v = r["valid"]
base = f"op={r['op']},dtype_in={r['dtype_in']},dtype_out={r['dtype_out']},acc={r['acc']}"
print(f"{base},k={int(v['n_min'])},outputs={int(v['outputs_fitted'])}")
print(f"{base},k={int(v['n_max']) * 4},outputs={int(v['outputs_fitted'])}")
PY
q_in=$(sed -n 1p "$T/q.args"); q_out=$(sed -n 2p "$T/q.args")
"$KCS" reduce --tolerances "$T/cal/tolerances.json" --query "$q_in" > "$T/q_in.json" 2> "$T/q_in.err" ||
  fail "--query $q_in: $(cat "$T/q_in.err")"
[ ! -s "$T/q_in.err" ] || fail "a warning inside the scope: $(cat "$T/q_in.err")"
"$KCS" reduce --tolerances "$T/cal/tolerances.json" --query "$q_out" > "$T/q_out.json" 2> "$T/q_out.err" ||
  fail "--query $q_out: $(cat "$T/q_out.err")"
grep -q "kcs reduce: warning: .*asked outside its scope: k = [0-9]* is outside its validity range" "$T/q_out.err" ||
  fail "no warning outside the scope: $(cat "$T/q_out.err")"
"$PYTHON" - "$T/cal/tolerances.json" "$T/q_in.json" "$T/q_out.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))["recommendations"][0]
qi, qo = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
v = r["valid"]
assert qi["valid"] is True and qo["valid"] is False, (qi, qo)
for q in (qi, qo):
    s = q["scope"]
    assert (s["op"], s["dtype_in"], s["dtype_out"], s["acc"], s["metric"]) == \
        (r["op"], r["dtype_in"], r["dtype_out"], r["acc"], r["metric"]), s
    assert s["k_range"] == [v["n_min"], v["n_max"]] and s["outputs_fitted"] == v["outputs_fitted"]
    assert s["outputs"] == v["outputs_fitted"] and s["input_scale"]
# at n_min with N = N0 the answer is the fit's own value there
if r["form"] == "power":
    want = r["c"] * v["n_min"] ** r["alpha"] * r["u"]
else:
    want = dict((n, e) for n, e in r["envelope"])[v["n_min"]]
assert math.isclose(qi["eta"], want, rel_tol=1e-6), (qi["eta"], want)
assert (qi["scale_free"] is not None) == (r["metric"] == "scaled")
print("query: eta %.4g at k = %g, scope stated" % (qi["eta"], v["n_min"]))
PY
set +e
"$KCS" reduce --tolerances "$T/cal/tolerances.json" --query "op=gemm,k=4" 2> "$T/q_bad.err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "op=, dtype_in=, k= and outputs= are required" "$T/q_bad.err" ||
  fail "a malformed query: exit $rc, $(cat "$T/q_bad.err")"

# --json alone: the same one object, the summary without a judgement
"$KCS" reduce "$T/judge.h5" -o "$T/plain" --no-plots --json > "$T/plain.json"
"$PYTHON" - "$T/plain.json" "$T/judged.json" <<'PY'
import json, sys
plain, judged = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "judged" not in plain and "tolerances" not in plain, sorted(plain)
assert plain["totals"]["trials"] == judged["totals"]["trials"] == 72, plain["totals"]
assert [r["rank"] for r in plain["results"]] == list(range(6)), plain["results"]
PY
echo "reduce_tolerances: ok"
