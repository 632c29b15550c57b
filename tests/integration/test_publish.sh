#!/usr/bin/env bash
# kcs publish: a bundle of a small study (datasets copied and readable by
# h5py and h5dump, datapackage.json's hashes and CSV schemas checked by
# python, every measurement traced to its HDF5 rows), --verify passes, and
# fails naming the file when a CSV cell, an HTML link or a data file is
# tampered with; a kcs detect dataset's curves are published with their
# Clopper-Pearson intervals; two datasets merge as two sites (duplicate labels get the
# site); --silicon imports the H200 run as its own device columns; bad input
# and a user's directory are refused with exit 2 and nothing written.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/small.yaml"
mpirun4 "$KCS" run "$study" -o "$T/site1.h5" -q
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$study" -o "$T/site2.h5" -q --subset

# one site, with the H200 report
"$KCS" publish "$T/site1.h5" --silicon "$KCS_SRC/docs/silicon/nvidia-h200/run1" -o "$T/b" \
  2> "$T/progress.txt" > /dev/null
grep -q "kcs publish: reducing 1 dataset" "$T/progress.txt" || fail "no progress: $(cat "$T/progress.txt")"
for f in index.html op-gemm.html datapackage.json CITATION.cff LICENSE-data.txt tolerances.json \
         tables/measurements.csv tables/pairs.csv tables/devices.csv tables/tolerances.csv \
         tables/sources.csv tables/dictionary.csv tables/dictionary.md rows/measurements.html \
         data/01-site1.h5 silicon/nvidia-h200-run1/study-verdicts.csv; do
  [ -s "$T/b/$f" ] || fail "bundle lacks $f"
done
cmp -s "$T/site1.h5" "$T/b/data/01-site1.h5" || fail "data/01-site1.h5 is not a copy of site1.h5"
h5dump -H "$T/b/data/01-site1.h5" > /dev/null || fail "h5dump cannot read the copied dataset"
"$PYTHON" "$KCS_SRC/tests/integration/check_bundle.py" "$T/b" || fail "check_bundle"
# the H200 column: imported, labelled, fingerprinted from its probe files
grep -q '^[0-9]*,"cuda:0 native @nvidia-h200-run1 \[imported from report, raw HDF5 not kept\]".*,true,gemm,bf16,' \
  "$T/b/tables/measurements.csv" || fail "no imported H200 rows"
grep -q 'NVIDIA H200.*,bf16,1\.\.2,24,rne,c-last,.*silicon/nvidia-h200-run1/probe-bf16.json' \
  "$T/b/tables/devices.csv" || fail "no H200 fingerprint"
grep -q 'href="../silicon/nvidia-h200-run1/study-verdicts.csv"' "$T/b/rows/measurements.html" ||
  fail "imported numbers do not link to their CSV"
# emulated fingerprints come from the profile table
grep -q 'profile=amd-mi100.*,amd-mi100,bf16,2,24,rne,' "$T/b/tables/devices.csv" ||
  fail "no amd-mi100 fingerprint from the profile table"
# the dictionary has the tidy columns and the dataset's own field descriptions
grep -q '^tables/measurements.csv,max_scaled,number,' "$T/b/tables/dictionary.csv" || fail "dictionary"
grep -q '^data/\*.h5:/results,max_abs,' "$T/b/tables/dictionary.csv" || fail "dictionary lacks /results"
# no network: no script, no external src
! grep -l '<script\|src="http' "$T/b"/*.html "$T/b"/rows/*.html || fail "a page fetches or scripts"

"$KCS" publish --verify "$T/b" -q || fail "verify of a fresh bundle"
# the BLAS thread count of the verifier does not matter (publish and
# --verify both compute on one thread)
OPENBLAS_NUM_THREADS=1 "$KCS" publish --verify "$T/b" -q || fail "verify with one BLAS thread"
OPENBLAS_NUM_THREADS=2 "$KCS" publish --verify "$T/b" -q || fail "verify with two BLAS threads"

# tampering: a CSV cell, a link, a data file
cp -r "$T/b" "$T/t1"
sed -i '3s/,gemm,/,gemX,/' "$T/t1/tables/measurements.csv"
expect_rc 1 "$T/v1.txt" "$KCS" publish --verify "$T/t1" -q
grep -q "tables/measurements.csv: line 3 (row 1), column op: 'gemX', recomputed 'gemm'" "$T/v1.txt" ||
  fail "CSV tamper not named: $(cat "$T/v1.txt")"
grep -q "tables/measurements.csv: sha256" "$T/v1.txt" || fail "hash mismatch not named"
cp -r "$T/b" "$T/t2"
sed -i '0,/rows\/measurements.html#r-3"/s//rows\/measurements.html#r-99999"/' "$T/t2/op-gemm.html"
expect_rc 1 "$T/v2.txt" "$KCS" publish --verify "$T/t2" -q
grep -q "op-gemm.html:[0-9]*: dead link rows/measurements.html#r-99999" "$T/v2.txt" ||
  fail "dead link not named: $(cat "$T/v2.txt")"
cp -r "$T/b" "$T/t3"
"$PYTHON" - "$T/t3/data/01-site1.h5" <<'PY'
import os, sys
n = os.path.getsize(sys.argv[1])
with open(sys.argv[1], "r+b") as f:
    f.seek(n // 2); b = f.read(1); f.seek(n // 2); f.write(bytes([b[0] ^ 0xFF]))
PY
# a byte the HDF5 checksums cover is bad input (2), any other a hash mismatch (1)
rc=0; "$KCS" publish --verify "$T/t3" -q > "$T/v3.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "verify of a damaged data file: exit $rc"
grep -q "data/01-site1.h5" "$T/v3.txt" || fail "damaged data file not named: $(cat "$T/v3.txt")"

# a kcs detect dataset: its detection curves, every row traced to /analysis/detection
{ study_head det 5 16 C-PRC-01; own_ranks sequential/fp32
  printf 'cases:\n  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[16, 16, 256]], inputs: [normal], trials: 2 }\n'
} > "$T/det.yaml"
"$KCS" detect "$T/det.yaml" -o "$T/det.h5" --trials 20 --magnitudes 5 --inputs 1 -q
"$KCS" publish "$T/site1.h5" "$T/det.h5" -q -o "$T/d"
"$PYTHON" - "$T/d" <<'PY'
import csv, re, sys
import h5py
from scipy.stats import beta
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/tables/detection.csv")))
page = open(d + "/rows/detection.html").read()
det = h5py.File(d + "/data/02-det.h5", "r")["analysis/detection"][:]
assert len(rows) == len(det) > 0, (len(rows), len(det))
for r in rows:
    ref = re.search(r'id="r-%s">.*?<code>(data/[^<]+)</code></a> <code>/analysis/detection row (\d+)</code>'
                    % r["row_id"], page, re.S)
    assert ref and ref.group(1) == "data/02-det.h5", r["row_id"]
    x = det[int(ref.group(2))]
    assert int(r["trials"]) == x["trials"] and int(r["detected"]) == x["detected"], r
    assert r["detector"] == x["detector"].decode(), r
    n, k = int(r["trials"]), int(r["detected"])
    lo = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    assert abs(float(r["p_lo"]) - lo) < 1e-9 and abs(float(r["p_hi"]) - hi) < 1e-9, (r, lo, hi)
PY
grep -q "<h2>Detection curves</h2>" "$T/d/op-gemm.html" || fail "no detection curves on the op page"
"$KCS" publish --verify "$T/d" -q || fail "verify of the bundle with detection curves"

# two sites: one atlas; the same implementations get their site
"$KCS" publish "$T/site1.h5" "$T/site2.h5" -q -o "$T/m"
grep -q '^01-site1,dataset,data/01-site1.h5,small,' "$T/m/tables/sources.csv" || fail "site 1"
grep -q '^02-site2,dataset,data/02-site2.h5,small,' "$T/m/tables/sources.csv" || fail "site 2"
grep -q ',cpu:0 native @01-site1,01-site1,' "$T/m/tables/measurements.csv" || fail "site suffix 1"
grep -q ',cpu:0 native @02-site2,02-site2,' "$T/m/tables/measurements.csv" || fail "site suffix 2"
"$KCS" publish --verify "$T/m" -q || fail "verify of the two-site bundle"
# replacing an earlier bundle is allowed; a user's directory is not
"$KCS" publish "$T/site1.h5" -q -o "$T/m"
[ -e "$T/m/data/02-site2.h5" ] && fail "the earlier bundle was not replaced whole"
mkdir "$T/mine" && echo keep > "$T/mine/notes.txt"
expect_rc 2 "$T/r1.txt" "$KCS" publish "$T/site1.h5" -q -o "$T/mine"
grep -q "not a kcs bundle" "$T/r1.txt" || fail "$(cat "$T/r1.txt")"
[ "$(cat "$T/mine/notes.txt")" = keep ] || fail "the user's directory was touched"
# a damaged input: exit 2 naming it, nothing left behind
cp "$T/site1.h5" "$T/bad.h5" && truncate -s -4096 "$T/bad.h5"
expect_rc 2 "$T/r2.txt" "$KCS" publish "$T/bad.h5" -q -o "$T/nb"
grep -q "bad.h5" "$T/r2.txt" || fail "$(cat "$T/r2.txt")"
[ -e "$T/nb" ] && fail "a bundle was written from a damaged dataset"
ls -d "$T"/nb.partial-* 2>/dev/null && fail "a partial bundle was left"
expect_rc 2 "$T/r3.txt" "$KCS" publish --verify "$T/mine" -q
grep -q "not a kcs bundle" "$T/r3.txt" || fail "$(cat "$T/r3.txt")"
# a native device (OpenCL on PoCL) fingerprinted from kcs probe --json and --order --json
study_cpu_opencl ocl 5 > "$T/ocl.yaml"
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/ocl.yaml" -o "$T/ocl.h5" -q
"$KCS" probe --backend opencl --json > "$T/probe.json" 2> /dev/null
"$KCS" probe --order --op gemm -k 16 --backend opencl --json > "$T/order.json" 2> /dev/null
"$KCS" publish "$T/ocl.h5" --probe "$T/probe.json" --probe "$T/order.json" -q -o "$T/o"
"$PYTHON" - "$T/o/tables/devices.csv" "$T/probe.json" "$T/order.json" <<'PY'
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["backend"] == "opencl"]
p, o = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
assert len(rows) == 1, rows
r = rows[0]
assert r["kind"] == "native" and r["model"] == p["model"], r
assert (r["block_size"], r["acc_bits"], r["rounding"], r["step"]) == \
    (p["F"]["text"], p["acc_bits"]["text"], p["rounding"], p["step"]), r
assert r["order"] == "gemm k=16: " + o["trees"][0]["tree"], r["order"]
assert r["source"] == "probes/01-probe.json", r["source"]
PY
"$KCS" publish --verify "$T/o" -q || fail "verify of the probed bundle"
echo "test_publish: ok"
