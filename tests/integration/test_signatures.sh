#!/usr/bin/env bash
# Signatures that name the fault (issue 42), through kcs grade on the
# plugins of tests/plugin/sig_plugin.c (each writes fp32, declares fp32
# accumulation):
# - OVER16 writes 16 bytes past its output: every contract names
#   write-past-output, and the line gives the changed guard bytes, exactly
#   the 16 after the output;
# - INFZERO zeroes infinite outputs: the default kcs grade (every contract)
#   FAILs it, C-EXC-03 in every trial (+Inf alone, -Inf alone, both signs)
#   naming infinities-zeroed, and nothing else fails;
# - OUTBF16 sums in fp32 and stores bf16 while declaring fp32 out:
#   output-rounded-to-bf16, never the accumulator;
# - TRUNCTF32 truncates its inputs to tf32: input-truncated-to-11-bits,
#   neither the rounded-input nor the accumulator signature;
# - GOOD passes.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"
S=(--shape 16x16x64,8x8x512)
grade 3 "$T/over.txt" "$P/libkcs_sig_over16.so" C-PRC-01 C-EXC-03 "${S[@]}"
has_rows "$T/over.txt" over16 '^C-PRC-01 +gemm +FAIL .*write-past-output' \
  '^C-EXC-03 +gemm +FAIL .*write-past-output'
# the offsets: bytes B..B+15 relative to an output of B bytes
grep -E '^C-' "$T/over.txt" | while read -r line; do
  [[ $line =~ bytes\ ([0-9]+)\.\.([0-9]+)\ relative\ to\ an\ output\ of\ ([0-9]+)\ bytes ]] ||
    fail "over16: no guard offsets on: $line"
  (( BASH_REMATCH[1] == BASH_REMATCH[3] && BASH_REMATCH[2] == BASH_REMATCH[3] + 15 )) ||
    fail "over16: offsets ${BASH_REMATCH[1]}..${BASH_REMATCH[2]} are not the 16 bytes past ${BASH_REMATCH[3]}"
done || exit 1

grade 3 "$T/inf.txt" "$P/libkcs_sig_infzero.so"
has_rows "$T/inf.txt" infzero '^C-EXC-03 +gemm +FAIL +27/27 +trials failed +infinities-zeroed'
[ "$(grep -cE '^C-[A-Z]+-[0-9]+ .* FAIL ' "$T/inf.txt")" = 1 ] ||
  { cat "$T/inf.txt"; fail "infzero: a contract other than C-EXC-03 fails"; }

grade 3 "$T/obf.txt" "$P/libkcs_sig_outbf16.so" C-PRC-01 --shape 32x32x256
has_rows "$T/obf.txt" outbf16 '^C-PRC-01 +gemm +FAIL .* output-rounded-to-bf16 '
! grep -q 'accumulator-narrower' "$T/obf.txt" || { cat "$T/obf.txt"; fail "outbf16: blamed the accumulator"; }

grade 3 "$T/tf.txt" "$P/libkcs_sig_trunctf32.so" C-PRC-01 --shape 32x32x256
has_rows "$T/tf.txt" trunctf32 '^C-PRC-01 +gemm +FAIL .* input-truncated-to-11-bits '
! grep -qE 'accumulator-narrower|input-rounded' "$T/tf.txt" ||
  { cat "$T/tf.txt"; fail "trunctf32: named rounding or the accumulator"; }
# the format that failed is named: truncating fp32 to tf32 leaves bf16/fp16 inputs exact
has_rows "$T/tf.txt" trunctf32 '\[dtype_in fp32 failed\]'

grade 0 "$T/good.txt" "$P/libkcs_sig_good.so" C-PRC-01 C-EXC-03 "${S[@]}"
has_rows "$T/good.txt" good '^C-PRC-01 +gemm +PASS' '^C-EXC-03 +gemm +PASS'
echo "signatures: ok"
