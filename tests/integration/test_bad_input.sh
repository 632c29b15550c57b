#!/usr/bin/env bash
# Bad input: a clear error naming the file and field, exit status 2, and no
# output file (nor a partial one) left behind.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/s"
cp "$KCS_SRC/tests/studies/small.yaml" "$T/s/good.yaml"
sed -i "s|../../contracts/|$KCS_SRC/contracts/|" "$T/s/good.yaml"

expect_bad() { # name pattern file
  local name=$1 pattern=$2 file=$3
  set +e
  mpirun4 "$KCS" run "$file" -o "$T/$name.h5" -q 2> "$T/$name.err"; local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2; stderr: $(cat "$T/$name.err")"
  grep -qE "$pattern" "$T/$name.err" || fail "$name: stderr lacks /$pattern/: $(cat "$T/$name.err")"
  [ ! -e "$T/$name.h5" ] && [ ! -e "$T/$name.h5.partial" ] || fail "$name: output left behind"
  # One message, printed once (by rank 0), not once per rank.
  local n; n=$(grep -cE "$pattern" "$T/$name.err")
  [ "$n" -eq 1 ] || fail "$name: message printed $n times"
}

# YAML syntax error
printf 'name: x\nseed: [1, 2\nplacement: auto\n' > "$T/s/syntax.yaml"
expect_bad syntax "syntax.yaml:[0-9]+:[0-9]+" "$T/s/syntax.yaml"

# unknown backend
sed 's/backend: cpu, variant: native/backend: tpu, variant: native/' "$T/s/good.yaml" > "$T/s/backend.yaml"
expect_bad backend "backend.yaml:[0-9]+:[0-9]+: placement\[0\].*unknown backend 'tpu'" "$T/s/backend.yaml"

# unknown field
sed 's/^seed: 7/seed: 7\nsede: 8/' "$T/s/good.yaml" > "$T/s/field.yaml"
expect_bad field "field.yaml:[0-9]+:[0-9]+: .*sede.*unknown" "$T/s/field.yaml"

# wrong type
sed 's/trials: 2/trials: two/' "$T/s/good.yaml" > "$T/s/type.yaml"
expect_bad type "type.yaml:[0-9]+:[0-9]+: cases\[0\]\.trials" "$T/s/type.yaml"

# missing study file
expect_bad missing "nope.yaml" "$T/s/nope.yaml"

# missing contract file
sed "s|$KCS_SRC/contracts/C-PRC-01.yaml|$T/none/C-PRC-01.yaml|" "$T/s/good.yaml" > "$T/s/contract.yaml"
expect_bad contract "contract.yaml:[0-9]+:[0-9]+: contracts\[0\].*none/C-PRC-01.yaml" "$T/s/contract.yaml"

# a shape beyond the memory cap is refused up front
sed 's/shapes: \[\[16, 16, 256\], \[8, 12, 1024\]\]/shapes: [[16777216, 16777216, 1048576]]/' "$T/s/good.yaml" > "$T/s/huge.yaml"
expect_bad huge "huge.yaml: cases\[0\]: shape .* MiB per rank, above the cap" "$T/s/huge.yaml"

# a case shape outside the contract's precondition (C-PRC-01: k in [1, 1048576])
sed 's/shapes: \[\[16, 16, 256\], \[8, 12, 1024\]\]/shapes: [[16, 16, 256], [4, 4, 2097152]]/' "$T/s/good.yaml" > "$T/s/range.yaml"
expect_bad range "range.yaml:[0-9]+:[0-9]+: cases\[0\]\.shapes\[1\]: dimension k = 2097152 is outside the precondition's range \[1, 1048576\] of C-PRC-01" "$T/s/range.yaml"

# an input distribution the precondition does not admit
sed 's/inputs: \[normal, uniform_pm1\]/inputs: [normal, offset]/' "$T/s/good.yaml" > "$T/s/dist.yaml"
expect_bad dist "dist.yaml:[0-9]+:[0-9]+: cases\[0\]\.inputs: input distribution offset is not admitted by C-PRC-01" "$T/s/dist.yaml"

# the operator's KCS_MAX_MEMORY_MIB is a ceiling a study's max_memory_mib cannot lift
sed 's/^seed: 7/seed: 7\nmax_memory_mib: 100000/; s/shapes: \[\[16, 16, 256\], \[8, 12, 1024\]\]/shapes: [[512, 512, 512]]/' \
  "$T/s/good.yaml" > "$T/s/capped.yaml"
grep -q "max_memory_mib: 100000" "$T/s/capped.yaml" || fail "capped.yaml not made"
KCS_MAX_MEMORY_MIB=1 expect_bad capped "capped.yaml: cases\[0\]: .* above the cap of 1 MiB" "$T/s/capped.yaml"

# a FIFO (or device) as study or contract is refused, not read (it would block)
mkfifo "$T/s/fifo.yaml"
expect_bad fifo "fifo.yaml: not a regular file" "$T/s/fifo.yaml"
sed "s|$KCS_SRC/contracts/C-PRC-01.yaml|$T/s/fifo.yaml|" "$T/s/good.yaml" > "$T/s/fifoc.yaml"
expect_bad fifoc "fifo.yaml: not a regular file" "$T/s/fifoc.yaml"

# a file that is not YAML: refused without echoing its content
printf 'root:*:19000:0:99999:7:::\nsecret-token-XYZ:x:1:\n' > "$T/s/shadow"
expect_bad shadow "shadow:1:1: .*unknown key" "$T/s/shadow"
! grep -qE "root|secret-token" "$T/shadow.err" || fail "the content of a non-YAML file was echoed"

# I/O failures are not bad input: exit 1 (an output directory that does not exist)
set +e
mpirun4 "$KCS" run "$T/s/good.yaml" -o "$T/no/such/dir/out.h5" -q 2> "$T/io.err"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "unwritable output: exit $rc, expected 1: $(cat "$T/io.err")"
grep -q "cannot create the journal directory" "$T/io.err" || fail "io: $(cat "$T/io.err")"

# the flags themselves
set +e
"$KCS" run 2> "$T/flags.err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "kcs run without arguments exited $rc"
echo "bad_input: ok"
