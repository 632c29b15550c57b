#!/usr/bin/env bash
# cmake --install puts kcs, its libraries (the public libkcs, the command's
# libkcs_private) and backend modules, the public headers (include/kcs/:
# plugin ABI, worker protocol, dataset reading, nothing else), kcs.pc, the
# CMake package, contracts, studies and the Slurm templates in place. The
# installed tree is then moved (it is relocatable), the moved kcs writes a
# small dataset, and an external C program reads it through
# <kcs/kcs_dataset.h>, built twice: through the CMake package and through
# `pkg-config --cflags --libs kcs`; what it prints is checked against h5py's
# reading of the same file. libkcs exports exactly cmake/libkcs.map's list.
source "$(dirname "$0")/lib.sh"
cmake --install "$KCS_BUILD" --prefix "$T/prefix" > "$T/install.log"
mv "$T/prefix" "$T/moved"
p="$T/moved"
for f in bin/kcs lib/libkcs.so lib/libkcs_private.so include/kcs/kcs_plugin.h \
         include/kcs/kcs_worker.h include/kcs/kcs_dataset.h lib/pkgconfig/kcs.pc \
         lib/cmake/kcs/kcsConfig.cmake \
         share/kcs/contracts/C-PRC-01/C-PRC-01.yaml share/kcs/contracts/C-PRC-01/calibration.yaml \
         share/kcs/contracts/C-PRC-01/README.md share/kcs/contracts/README.md share/kcs/studies/default.yaml \
         share/kcs/slurm/study.sbatch share/kcs/slurm/pin-device; do
  [ -e "$p/$f" ] || fail "not installed: $f"
done
# the public headers and nothing else
hdrs=$(cd "$p/include" && find . -type f | sort | tr '\n' ' ')
[ "$hdrs" = "./kcs/kcs_dataset.h ./kcs/kcs_plugin.h ./kcs/kcs_worker.h " ] \
  || fail "installed headers are not just the public three: $hdrs"
# libkcs exports the listed functions and nothing else
want=$(sed -n 's/^ *\(kcs_[a-z_]*\);$/\1/p' "$KCS_SRC/cmake/libkcs.map" | sort | tr '\n' ' ')
got=$(nm -D --defined-only "$p/lib/libkcs.so" | awk '$2 ~ /^[TDBRW]$/ {sub(/@.*/, "", $3); print $3}' | sort | tr '\n' ' ')
[ -n "$want" ] && [ "$want" = "$got" ] || fail "libkcs exports [$got], cmake/libkcs.map lists [$want]"
[ ! -e "$p/lib/libkcs.a" ] || fail "a static libkcs.a is installed next to the shared one"
for m in "$KCS_BUILD"/lib/kcs/libkcs_backend_*.so; do
  [ -e "$m" ] || continue
  [ -e "$p/lib/kcs/$(basename "$m")" ] || fail "backend module not installed: $(basename "$m")"
done
"$p/bin/kcs" version > /dev/null
"$p/bin/kcs" lint -q "$p"/share/kcs/contracts/C-*/C-*.yaml || fail "installed contracts do not lint"
# the installed contract folders hold their calibration: one contract's three states
"$p/bin/kcs" calibrate C-EXC-02 > "$T/calib.txt" 2>&1 || fail "installed kcs calibrate: $(cat "$T/calib.txt")"
grep -q "1 sound" "$T/calib.txt" || fail "installed kcs calibrate: $(cat "$T/calib.txt")"
# the moved kcs finds its modules next to its own libkcs, not the build tree's
if ls "$p"/lib/kcs/libkcs_backend_*.so > /dev/null 2>&1; then
  "$p/bin/kcs" devices > "$T/devices.txt"
  grep -q "cannot load" "$T/devices.txt" && fail "installed kcs cannot load its modules: $(cat "$T/devices.txt")"
  LD_DEBUG=libs "$p/bin/kcs" devices 2> "$T/ld.txt" > /dev/null
  grep -q "$KCS_BUILD/lib" "$T/ld.txt" && fail "installed kcs loaded a library of the build tree"
  grep -q "$p/lib/kcs/libkcs_backend" "$T/ld.txt" || fail "installed kcs did not load its own modules"
fi
for f in "$p/lib/pkgconfig/kcs.pc" "$p/lib/cmake/kcs/kcsConfig.cmake"; do
  grep -q "$KCS_BUILD\|$T/prefix" "$f" && fail "$f names the build tree or the install prefix"
done

# a dataset written by the moved kcs
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$p/bin/kcs" run \
  "$KCS_SRC/tests/studies/diskfull.yaml" -o "$T/ds.h5" > "$T/run.log" 2>&1 \
  || { cat "$T/run.log"; fail "the installed kcs could not write a dataset"; }

mkdir -p "$T/consumer"
cat > "$T/consumer/main.c" <<'C'
#include <error.h> /* glibc's: not shadowed by anything of kcs */
#include <stdio.h>
#include <string.h>
#include <kcs/kcs_dataset.h>
int main(int argc, char **argv)
{
    char msg[1024];
    kcs_dataset *ds;
    error_print_progname = NULL;
    if (argc != 2 || kcs_dataset_api_version() != KCS_DATASET_API_VERSION)
        return 2;
    if (kcs_dataset_open(argv[1], &ds, msg, sizeof msg)) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    const kcs_dataset_info *in = kcs_dataset_get_info(ds);
    long within = 0, rows = 0;
    for (int64_t i = 0; i < in->n_cases; i++) {
        kcs_dataset_case c;
        const kcs_dataset_result *r;
        int n;
        if (kcs_dataset_get_case(ds, i, &c, msg, sizeof msg) ||
            kcs_dataset_get_results(ds, i, &r, &n, msg, sizeof msg)) {
            fprintf(stderr, "%s\n", msg);
            return 1;
        }
        for (int j = 0; j < n; j++) {
            rows += r[j].trial >= 0 && r[j].status[0] != 0;
            within += strcmp(r[j].verdict, "within_tolerance") == 0;
        }
    }
    /* an index past the table is refused with a message, not read */
    kcs_dataset_case c;
    int past = kcs_dataset_get_case(ds, in->n_cases, &c, msg, sizeof msg);
    printf("%s %lld %d %ld %ld %d\n", in->study_name, (long long)in->n_cases, in->n_ranks, rows,
           within, past == KCS_DATASET_E_RANGE && strstr(msg, "/cases") != NULL);
    kcs_dataset_close(ds);
    return 0;
}
C
cat > "$T/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(kcs REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE kcs::kcs)
CM
# what h5py reads from the same file: study, cases, ranks, filled rows, within_tolerance rows
expect=$("$PYTHON" - "$T/ds.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
r = f["results"][()]
name = f.attrs["study_name"]
name = name.decode() if isinstance(name, bytes) else name
filled = sum(1 for s in r["status"] if s.rstrip(b"\0"))
within = sum(1 for v in r["verdict"] if v.rstrip(b"\0") == b"within_tolerance")
print(name, len(f["cases"]), len(f["provenance/ranks"]), filled, within, 1)
PY
)
[ -n "$expect" ] || fail "h5py could not read the dataset"
cmake -S "$T/consumer" -B "$T/consumer/build" -DCMAKE_PREFIX_PATH="$p" > "$T/consumer.log" 2>&1 \
  || { cat "$T/consumer.log"; fail "find_package(kcs) failed"; }
cmake --build "$T/consumer/build" > "$T/consumer-build.log" 2>&1 \
  || { cat "$T/consumer-build.log"; fail "linking against kcs::kcs failed"; }
got=$("$T/consumer/build/consumer" "$T/ds.h5") || fail "consumer failed: $got"
[ "$got" = "$expect" ] || fail "consumer read [$got], h5py [$expect]"
readelf -d "$T/consumer/build/consumer" | grep -q 'NEEDED.*\[libkcs.so\]' || fail "consumer does not link the shared libkcs"
readelf -d "$T/consumer/build/consumer" | grep -q 'NEEDED.*libkcs_private' && fail "consumer links libkcs_private"
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
cc -std=c17 "$T/consumer/main.c" -o "$T/pc" $(pkg-config --cflags --libs kcs) \
  -Wl,-rpath,"$(pkg-config --variable=libdir kcs)" 2> "$T/pc.log" \
  || { cat "$T/pc.log"; fail "pkg-config (shared) build failed"; }
[ "$("$T/pc" "$T/ds.h5")" = "$expect" ] || fail "pkg-config consumer read something else"
# a file that is not a dataset: a message naming it, exit 1
echo "not hdf5" > "$T/bad.h5"
"$T/pc" "$T/bad.h5" 2> "$T/bad.txt" && fail "consumer opened a non-dataset"
grep -q "bad.h5" "$T/bad.txt" || fail "no message naming the file: $(cat "$T/bad.txt")"
echo "install: ok ($got)"
