#!/usr/bin/env bash
# The corrupted-dataset sweep's representative variants (scripts/corrupt-sweep
# --quick; the full sweep of >= 500 variants is run by hand, docs/testing.md):
# metadata and data byte flips, a truncation, the superblock's end of file
# moved (23 bytes short: issue 43's case, and 8 bytes long), and h5py-level
# edits no writer produces (an unknown status, m = 1e12, a digest narrowed to
# int8, samples in float16, a wrong input digest: with the content digests
# removed, so that schema validation is what must refuse them; an edited
# sample with the digests kept). The script fails on a hang, an exit status
# other than 0 or 2, a changed input byte, or an exit-0 report that differs
# from the clean one without a warning; here each refusal must also name
# what it refused.
source "$(dirname "$0")/lib.sh"
mpirun4 "$KCS" run "$KCS_SRC/tests/studies/diskfull.yaml" -o "$T/clean.h5" -q
"$PYTHON" "$KCS_SRC/scripts/corrupt-sweep" --kcs "$KCS" --dataset "$T/clean.h5" --quick \
  --workdir "$T/w" --timeout 30 > "$T/out" 2>&1 || { cat "$T/out"; fail "the sweep missed its target"; }
cat "$T/out"
has_rows "$T/out" "corrupt sweep" \
  '^eoa-23 +exit 2 .*superblock declares the file ends at byte' \
  '^data-flip +exit 2 .*(Fletcher32|content digest)' \
  'status-bogus \(digests removed\) +exit 2 .*row 1: field status: "bogus"' \
  'm-1e12 \(digests removed\) +exit 2 .*row 0: field m: 1000000000000' \
  'digest-int8 \(digests removed\) +exit 2 .*field output_digest is of another width' \
  'samples-float16 \(digests removed\) +exit 2 .*/samples: not a float64' \
  'input-digest \(digests removed\) +exit 2 .*row 1: field input_digest' \
  '^semantic:samples-edited +exit 2 .*/samples: content digest' \
  'tau-edited \(digests removed\) +exit 0 .*warning=1' \
  '^14 variants; exit 0 with a different report and no warning: 0; failures: 0'
echo "corrupt_sweep: ok"
