#!/usr/bin/env bash
# Shape classes (precondition.shape.multiple_of, issue 14): a contract that
# admits only multiples of 16 in k lints, and its normal form keeps the
# class; a measured shape outside the class is a lint error (file:line:
# field); `kcs grade --shape` refuses k = 100 with exit 2 naming the range
# and the class and grades k = 256; a study case at k = 100 is refused at
# its file:line:col (kcs check, exit 2); the sweep picks k in the class.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"
C="$KCS_SRC/contracts"

grep -q '^  shape: { k: \[1, 1048576\] }$' "$C/C-PRC-01/C-PRC-01.yaml" \
  || fail "C-PRC-01's shape line changed: update this test"
sed -e 's/^id: C-PRC-01$/id: C-PRC-91/' \
    -e 's/^  shape: { k: \[1, 1048576\] }$/  shape: { k: [16, 1048576], multiple_of: { k: 16 } }/' \
    "$C/C-PRC-01/C-PRC-01.yaml" > "$T/C-PRC-91.yaml"
grep -q 'multiple_of' "$T/C-PRC-91.yaml" || fail "sed did not apply"

# lint: valid, the class in the normal form, a fixed point
"$KCS" lint "$T/C-PRC-91.yaml" > "$T/n1.yaml" || fail "lint refused the class"
grep -qx '  shape: {k: \[16, 1048576\], multiple_of: {k: 16}}' "$T/n1.yaml" \
  || { cat "$T/n1.yaml"; fail "normal form lacks the class"; }
"$KCS" lint "$T/n1.yaml" > "$T/n2.yaml" || fail "normal form does not lint"
cmp -s "$T/n1.yaml" "$T/n2.yaml" || fail "normal form is not a fixed point"
"$KCS" lint --json "$T/C-PRC-91.yaml" > "$T/c.json"
"$PYTHON" -c 'import json,sys; c=json.load(open(sys.argv[1]))[0]; assert c["precondition"]["shape"]["multiple_of"] == {"k": 16}, c["precondition"]["shape"]' "$T/c.json" \
  || fail "lint --json: no multiple_of"

# lint: a measured shape outside the class
sed 's/\[64, 64, 256\], \[64, 64, 1024\]/[64, 64, 256], [64, 64, 1000]/' "$T/C-PRC-91.yaml" > "$T/bad.yaml"
rc=0
"$KCS" lint "$T/bad.yaml" > /dev/null 2> "$T/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "lint of a shape outside the class: exit $rc, expected 2"
line=$(grep -n '^  shapes:' "$T/bad.yaml" | cut -d: -f1)
grep -Eq "bad.yaml:$line:[0-9]+: measurement.shapes\[1\]: k = 1000 is not a multiple of 16 \(precondition.shape.multiple_of.k\)" "$T/bad.err" \
  || { cat "$T/bad.err"; fail "lint: no file:line:field for the shape outside the class"; }

# grade --shape: outside the class refused (exit 2, range and class named) ...
rc=0
"$KCS" grade "$P/libkcs_acc_seq.so" "$T/C-PRC-91.yaml" --shape 8x8x100 > "$T/o.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/o.txt"; fail "grade --shape 8x8x100: exit $rc, expected 2"; }
grep -q 'dimension k = 100 is not a multiple of 16: the precondition of C-PRC-91 admits k in \[16, 1048576\], multiples of 16 (precondition.shape.multiple_of.k)' "$T/o.txt" \
  || { cat "$T/o.txt"; fail "grade --shape 8x8x100: message"; }
# ... outside the range: the range and the class
rc=0
"$KCS" grade "$P/libkcs_acc_seq.so" "$T/C-PRC-91.yaml" --shape 8x8x8 > "$T/o.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/o.txt"; fail "grade --shape 8x8x8: exit $rc, expected 2"; }
grep -q "dimension k = 8 is outside the precondition's range \[16, 1048576\], multiples of 16 of C-PRC-91" "$T/o.txt" \
  || { cat "$T/o.txt"; fail "grade --shape 8x8x8: message"; }
# ... inside: graded (a conforming fp32 kernel passes)
rc=0
"$KCS" grade "$P/libkcs_acc_seq.so" "$T/C-PRC-91.yaml" --shape 8x8x256 > "$T/o.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -Eq '^C-PRC-91 .* PASS ' "$T/o.txt" || { cat "$T/o.txt"; fail "grade --shape 8x8x256: exit $rc"; }

# a study case outside the class: refused at its file:line:col
cat > "$T/s.yaml" <<YAML
name: class
seed: 1
contracts: [$T/C-PRC-91.yaml]
placement:
  - cpu
cases:
  - { contract: C-PRC-91, op: gemm, dtype_in: fp32, shapes: [[8, 8, 256], [8, 8, 100]], inputs: [normal], trials: 1 }
YAML
expect_rc 2 "$T/o.txt" "$KCS" check "$T/s.yaml" # a study case outside the class
has_rows "$T/o.txt" "study case outside the class" \
  "s.yaml:7:[0-9]+: cases\[0\]\.shapes\[1\]: dimension k = 100 is not a multiple of 16"
sed -i 's/, \[8, 8, 100\]//' "$T/s.yaml"
"$KCS" check "$T/s.yaml" > "$T/o.txt" 2>&1 || { cat "$T/o.txt"; fail "study inside the class refused"; }
# the sweep's points lie in the class: k_min 20 -> 32, x4 -> 80, 320, and
# --max-k 1000 -> 992 (the multiple below)
sed -e 's/^id: C-PRC-91$/id: C-PRC-92/' -e 's/k: \[16, 1048576\]/k: [20, 1048576]/' \
  "$T/C-PRC-91.yaml" > "$T/C-PRC-92.yaml"
"$KCS" calibrate --sweep "$T/C-PRC-92.yaml" --trials 2 --max-k 1000 -o "$T/sw.h5" > "$T/sw.txt" 2>&1 \
  || { cat "$T/sw.txt"; fail "sweep of a contract with a class"; }
ks=$(awk '$1 == "C-PRC-92" { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+x[0-9]+$/) { split($i, a, "x"); print a[3] } }' "$T/sw.txt" | sort -n | uniq | tr '\n' ' ')
[ "$ks" = "32 80 320 992 " ] || { cat "$T/sw.txt"; fail "sweep points k = '$ks', expected 32 80 320 992"; }
echo "shape classes: lint, grade --shape, study cases and the sweep enforce multiple_of"
