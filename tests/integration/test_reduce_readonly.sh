#!/usr/bin/env bash
# Raw data is written once (issue 43): kcs run seals the dataset (content
# digests, Fletcher32 on /results) and it stays readable by h5dump and h5py;
# kcs reduce only reads it -- a read-only, symlinked or hard-linked dataset
# keeps its bytes, mode and links -- and writes REPORT_DIR/analysis.h5; an
# h5repack'd dataset still verifies; a dataset from before digests reduces
# with a warning; the report directory is replaced whole only by a complete
# report, a failed reduce leaves the earlier one untouched, and a non-empty
# directory that is not a report is refused.
source "$(dirname "$0")/lib.sh"
mpirun4 "$KCS" run "$KCS_SRC/tests/studies/diskfull.yaml" -o "$T/d.h5" -q
h5dump -H "$T/d.h5" > /dev/null || fail "h5dump cannot read the dataset"
h5dump -p -H -d /results "$T/d.h5" > "$T/dump.txt"
grep -q "CHECKSUM FLETCHER32" "$T/dump.txt" || fail "/results has no Fletcher32"
"$PYTHON" - "$T/d.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for g in ("results", "samples", "cases", "provenance", "study", "contracts", "root"):
    v = f.attrs["digest_" + g]
    v = v.decode() if isinstance(v, bytes) else v
    assert len(v) == 16 and int(v, 16) >= 0, (g, v)
assert f["results"][:].shape[0] > 0 and f["samples"][:].ndim == 3
PY
sum0=$(sha256sum < "$T/d.h5")

# read-only, symlinked, hard-linked: left exactly as they are
chmod 444 "$T/d.h5"
"$KCS" reduce "$T/d.h5" -o "$T/r" --no-plots -q || fail "reduce of a read-only dataset failed"
[ "$(stat -c %a "$T/d.h5")" = 444 ] || fail "the read-only dataset's mode changed"
ln -s d.h5 "$T/link.h5"
ln "$T/d.h5" "$T/hard.h5"
ino=$(stat -c %i "$T/d.h5")
"$KCS" reduce "$T/link.h5" -o "$T/rl" --no-plots -q || fail "reduce of a symlink failed"
"$KCS" reduce "$T/hard.h5" -o "$T/rh" --no-plots -q || fail "reduce of a hard link failed"
[ -L "$T/link.h5" ] || fail "the symlink was replaced"
[ "$(stat -c %i "$T/hard.h5")" = "$ino" ] && [ "$(stat -c %h "$T/d.h5")" = 2 ] || fail "the hard link was broken"
[ "$(sha256sum < "$T/d.h5")" = "$sum0" ] || fail "reduce changed the dataset's bytes"
"$PYTHON" - "$T/r/analysis.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
s = lambda x: x.decode() if isinstance(x, bytes) else x
assert s(f.attrs["content"]) == "analysis"
assert s(f.attrs["source0_path"]).endswith("d.h5")
assert "results=" in s(f.attrs["source0_digests"]), f.attrs["source0_digests"]
assert len(f["analysis/verdicts"][:]) > 0
PY

# h5repack (layout and compression change, values do not): still verifies
h5repack -f GZIP=5 "$T/d.h5" "$T/packed.h5"
"$KCS" reduce "$T/packed.h5" -o "$T/rp" --no-plots -q || fail "a repacked dataset does not verify"
cmp -s "$T/r/verdicts.csv" "$T/rp/verdicts.csv" || fail "a repacked dataset gave other verdicts"

# from before digests: read, with a warning in stderr and in the report
cp "$T/d.h5" "$T/old.h5"; chmod 644 "$T/old.h5"
"$PYTHON" -c 'import sys,h5py
f = h5py.File(sys.argv[1], "r+")
for k in [k for k in f.attrs if k.startswith("digest_")]: del f.attrs[k]' "$T/old.h5"
expect_rc 0 "$T/old.txt" "$KCS" reduce "$T/old.h5" -o "$T/ro" --no-plots -q
grep -q "warning: .*old.h5 carries no content digests" "$T/old.txt" || fail "no warning: $(cat "$T/old.txt")"
grep -q "Unverified raw data" "$T/ro/report.md" || fail "the report does not say the data is unverified"

# a failed reduce leaves the earlier report untouched, and nothing partial
cp -r "$T/r" "$T/r-before"
cp "$T/d.h5" "$T/bad.h5"; chmod 644 "$T/bad.h5"
"$PYTHON" -c 'import sys,h5py
f = h5py.File(sys.argv[1], "r+")
f["samples"][0, 0, 0] = 1.0' "$T/bad.h5"
expect_rc 2 "$T/bad.txt" "$KCS" reduce "$T/bad.h5" -o "$T/r" --no-plots -q
grep -q "bad.h5: /samples: content digest" "$T/bad.txt" || fail "refusal does not name /samples: $(cat "$T/bad.txt")"
diff -r "$T/r" "$T/r-before" > /dev/null || fail "a failed reduce changed the earlier report"
! ls -d "$T"/r.partial-* > /dev/null 2>&1 || fail "a failed reduce left its partial report"
# a successful one replaces it whole
touch "$T/r/stale.csv"
"$KCS" reduce "$T/d.h5" -o "$T/r" --no-plots -q || fail "reduce over an earlier report failed"
[ ! -e "$T/r/stale.csv" ] && [ -s "$T/r/report.md" ] || fail "the report directory was not replaced whole"
# a directory that is not a report is refused, untouched
mkdir "$T/mine"; echo keep > "$T/mine/notes.txt"
expect_rc 2 "$T/mine.txt" "$KCS" reduce "$T/d.h5" -o "$T/mine" --no-plots -q
grep -q "not a kcs report directory" "$T/mine.txt" || fail "$(cat "$T/mine.txt")"
[ "$(ls "$T/mine")" = notes.txt ] || fail "a refused -o directory was changed"
echo "reduce_readonly: ok"
