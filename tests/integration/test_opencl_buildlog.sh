#!/usr/bin/env bash
# OpenCL program builds keep the compiler's diagnostics off the user's
# stderr (issue #18): PoCL prints "N warnings generated." to file
# descriptor 2 while it builds; kcs captures that and the program's build
# log into $KCS_OPENCL_BUILD_LOG instead. The warning is provoked with a
# build option that redefines a macro kcs sets. Skipped where the opencl
# backend has no device.
source "$(dirname "$0")/lib.sh"
"$KCS" devices | grep -Eq '^opencl +0 ' || { echo "SKIP: no OpenCL device"; exit 77; }
"$PYTHON" -c "
import struct
open('$T/A.f64','wb').write(struct.pack('<64d',*[1.0]*64)); open('$T/B.f64','wb').write(struct.pack('<64d',*[0.5]*64))"
ex() { POCL_CACHE_DIR=$(mktemp -d "$T/cache.XXXX") "$KCS" exec gemm --backend opencl --options "-DKCS_TSK=8" \
  -m 8 -n 8 -k 8 --a "$T/A.f64" --b "$T/B.f64" --out "$T/D.f64" --force "$@"; }
KCS_OPENCL_BUILD_LOG="$T/build.log" ex > /dev/null 2> "$T/err" || fail "exec failed: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "the build printed on stderr: $(cat "$T/err")"
grep -q "macro redefined" "$T/build.log" || fail "no compiler warning in the build log: $(cat "$T/build.log" 2>&1)"
grep -q "^== gemm.cl \[-DKCS_TSK=8 " "$T/build.log" || fail "the log does not name the program: $(head -3 "$T/build.log")"
ex > /dev/null 2> "$T/err2" || fail "exec without a log file failed"
[ ! -s "$T/err2" ] || fail "without KCS_OPENCL_BUILD_LOG the build printed: $(cat "$T/err2")"
echo "opencl_buildlog: ok"
