#!/usr/bin/env bash
# Held-out shapes reach the precondition (issue 14): a GEMM that is right up
# to m = 256 and sums in bf16 above (tests/plugin/example_plugin.c built
# with -DEXAMPLE_LARGE_M) passes every listed shape, yet default `kcs grade`
# fails it on C-CMP-03, whose measurement.held_out_draw draws shapes over
# the whole precondition (m up to 4096), naming held-out-shape-error; the
# correct example passes the same drawn shapes; C-PRC-01, which draws none,
# passes the special-cased kernel (its shapes stop at m = 64).
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"

grade 3 "$T/big.txt" "$P/libkcs_example_plugin_large_m.so" C-CMP-03 C-PRC-01 # a contract failed
cat "$T/big.txt"
# C-CMP-03 fails it with held-out-shape-error; C-PRC-01 (listed shapes only) passes it
has_rows "$T/big.txt" "large-m kernel" '^C-CMP-03 +gemm +FAIL .*held-out-shape-error' \
  '^C-PRC-01 +gemm +PASS'

"$KCS" grade "$P/libkcs_example_plugin.so" C-CMP-03 > "$T/ok.txt" 2>&1 ||
  { cat "$T/ok.txt"; fail "correct example: C-CMP-03 not passed on the drawn shapes"; }
grep -qE '^C-CMP-03 +gemm +PASS' "$T/ok.txt" || { cat "$T/ok.txt"; fail "correct example: no PASS row"; }

# The drawn shapes are in the plan: a study of C-CMP-03 stores held-out
# cases with m above 256, the same in every run of one seed.
cat > "$T/s.yaml" <<YAML
name: drawn
seed: 5
contracts: [ $KCS_SRC/contracts/C-CMP-03.yaml ]
placement: [ { backend: cpu, variant: native } ]
cases:
  - { contract: C-CMP-03, op: gemm, dtype_in: fp32, trials: 1 }
YAML
"$KCS" run "$T/s.yaml" -o "$T/s1.h5" > "$T/r1.txt" 2>&1 || { cat "$T/r1.txt"; fail "kcs run 1"; }
"$KCS" run "$T/s.yaml" -o "$T/s2.h5" > "$T/r2.txt" 2>&1 || { cat "$T/r2.txt"; fail "kcs run 2"; }
"$PYTHON" - "$T/s1.h5" "$T/s2.h5" <<'PY'
import sys, h5py
shapes = [[(int(r["m"]), int(r["n"]), int(r["k"])) for r in h5py.File(f, "r")["cases"][:]]
          for f in sys.argv[1:]]
assert shapes[0] == shapes[1], shapes      # one seed, one draw
listed = {(64, 64, 64), (128, 64, 256), (64, 128, 128), (48, 80, 96), (63, 65, 127),
          (1, 200, 33), (17, 5, 300)}
drawn = [s for s in shapes[0] if s not in listed]
assert drawn and max(m for m, n, k in drawn) > 256, drawn
print("drawn held-out shapes:", sorted(set(drawn)))
PY
echo "grade drawn shapes: ok"
