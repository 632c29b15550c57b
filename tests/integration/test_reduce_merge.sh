#!/usr/bin/env bash
# kcs reduce a.h5 b.h5: the merged dataset is itself a kcs dataset (ranks of
# b after a's, cases matched and their inputs proven identical, each
# source's provenance kept), reducible again (inputs still regenerated
# through /provenance/case_origin); a dataset of another study adds its
# cases; datasets that disagree on a case's inputs are refused with exit
# status 2 and nothing written.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/small.yaml"
mpirun4 "$KCS" run "$study" -o "$T/a.h5" -q
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$study" -o "$T/b.h5" -q --subset
# another study: another seed, so other cases
sed -e 's/^seed: .*/seed: 8/' -e 's/^name: .*/name: small-other/' \
    -e "s#\.\./\.\./contracts#$KCS_SRC/contracts#" "$study" > "$T/other.yaml"
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/other.yaml" -o "$T/c.h5" -q --subset

"$KCS" reduce "$T/a.h5" "$T/b.h5" "$T/c.h5" -o "$T/m" -q --no-plots
[ -s "$T/m/merged.h5" ] || fail "no merged.h5"
[ -s "$T/m/report.md" ] || fail "no report"
grep -q "## Sources" "$T/m/report.md" || fail "report lacks the sources"
# OpenBLAS of a (rank 0) and of b (rank 4) on the same inputs: reproducible
grep -qE "^\| 0, 4 \| cpu:0 native \| .* \| 4 \| 4 \|$" "$T/m/report.md" ||
  fail "report lacks the reproducibility of rank 0 vs rank 4"

"$PYTHON" - "$T/a.h5" "$T/b.h5" "$T/c.h5" "$T/m/merged.h5" "$T/m/analysis.h5" <<'PY'
import sys
import h5py
import numpy as np

s = lambda x: x.decode() if isinstance(x, bytes) else x
a, b, c, m, ma = (h5py.File(p, "r") for p in sys.argv[1:])  # ma: the report's analysis.h5
na, nb, nc = (int(x.attrs["n_ranks"]) for x in (a, b, c))
assert int(m.attrs["n_ranks"]) == na + nb + nc == 8
assert s(m.attrs["content"]) == "merged"
assert int(m.attrs["complete"]) == 1
# ranks: b's after a's, c's after b's, same implementations
mr = m["provenance/ranks"][:]
assert list(mr["rank"]) == list(range(8))
for i, r in enumerate(b["provenance/ranks"][:]):
    assert mr[na + i]["variant"] == r["variant"]
# cases: a and b share all 4 (same study), c brings 4 more
assert len(m["cases"]) == len(a["cases"]) + len(c["cases"]) == 8
T = int(m.attrs["max_trials"])
res = m["results"][:].reshape(8, 8, T)  # [case][rank][trial]
ac = a["cases"][:]
for ci in range(len(ac)):
    mc = m["cases"][ci]
    assert mc["input_digest"] == ac[ci]["input_digest"] == b["cases"][ci]["input_digest"]
    # rank 0 of a and rank 0 of b (OpenBLAS both) agree bitwise: same inputs
    for t in range(T):
        assert res[ci, 0, t]["output_digest"] == res[ci, na, t]["output_digest"]
    # c's ranks do not hold a's cases
    assert all(s(x) == "absent" for x in res[ci, na + nb:, :]["status"].ravel())
    sa = a["samples"][ci]  # a run's dataset: schema 2, [n_cases, n_ranks, n_samples]
    sm = m["samples/%d" % ci][:]  # a merged dataset: one per case
    assert np.array_equal(sa, sm[:na], equal_nan=True)
for ci in range(4, 8):
    assert all(s(x) == "absent" for x in res[ci, :na + nb, :]["status"].ravel())
# provenance of every source
for i, src in enumerate((a, b, c)):
    g = m["provenance/sources/%d" % i]
    assert s(g.attrs["plan_hash"]) == s(src.attrs["plan_hash"])
    assert int(g.attrs["first_rank"]) == [0, na, na + nb][i]
    assert "build" in g and "ranks" in g and "study" in g
srcs = ma["analysis/sources"][:]
assert list(srcs["n_matched"]) == [0, 4, 0], srcs["n_matched"]
assert int(ma["analysis"].attrs["recomputed_cases"]) == 8
assert "analysis" not in m  # the merged dataset is raw data, never written again
orig = m["provenance/case_origin"][:]
assert list(orig["source"]) == [0, 0, 0, 0, 2, 2, 2, 2]
print("merge: python checks ok")
PY

# the merged dataset reduces again like any dataset, inputs regenerated
"$KCS" reduce "$T/m/merged.h5" -o "$T/m2" -q --no-plots
grep -q "8 cases recomputed, 0 not" "$T/m2/report.md" || fail "merged dataset: inputs not regenerated"

# a case with other inputs: refused, exit 2, nothing written
cp "$T/b.h5" "$T/bad.h5"
"$PYTHON" - "$T/bad.h5" <<'PY'
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    c = f["cases"][:]
    c["input_digest"][1] = c["input_digest"][1] ^ np.uint64(1)
    f["cases"][...] = c
    # without its content digests (as from a kcs before them), so that the
    # merge's own check is what refuses it, not the digest of /cases
    for k in [k for k in f.attrs if k.startswith("digest_")]:
        del f.attrs[k]
PY
set +e
"$KCS" reduce "$T/a.h5" "$T/bad.h5" -o "$T/refused" -q 2> "$T/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "merging different inputs exited $rc, expected 2"
grep -q "refusing to merge" "$T/err.txt" || fail "no refusal message: $(cat "$T/err.txt")"
grep -q "bad.h5" "$T/err.txt" || fail "the message does not name the file"
[ ! -e "$T/refused" ] || fail "a refused merge wrote $T/refused"
echo "reduce_merge: ok"
