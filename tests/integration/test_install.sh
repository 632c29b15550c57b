#!/usr/bin/env bash
# cmake --install puts kcs, the shared libkcs and its backend modules,
# headers (as <kcs/NAME.h>), kcs.pc, the CMake package, contracts, studies
# and the Slurm templates in place. The installed tree is then moved (it is
# relocatable) and an external C program is built against it twice: through
# the CMake package and through `pkg-config --cflags --libs kcs` (shared
# linking); it includes glibc's <error.h> next to <kcs/error.h>, which an
# -I into include/kcs would have shadowed.
source "$(dirname "$0")/lib.sh"
cmake --install "$KCS_BUILD" --prefix "$T/prefix" > "$T/install.log"
mv "$T/prefix" "$T/moved"
p="$T/moved"
for f in bin/kcs lib/libkcs.so include/kcs_plugin.h include/kcs/format.h include/kcs/error.h \
         include/kcs/backend.h lib/pkgconfig/kcs.pc lib/cmake/kcs/kcsConfig.cmake \
         share/kcs/contracts/C-PRC-01/C-PRC-01.yaml share/kcs/contracts/C-PRC-01/calibration.yaml \
         share/kcs/contracts/C-PRC-01/README.md share/kcs/contracts/README.md share/kcs/studies/default.yaml \
         share/kcs/slurm/study.sbatch share/kcs/slurm/pin-device; do
  [ -e "$p/$f" ] || fail "not installed: $f"
done
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

mkdir -p "$T/consumer"
cat > "$T/consumer/main.c" <<'C'
#include <error.h> /* glibc's */
#include <stdio.h>
#include <kcs/error.h>
#include <kcs/format.h>
int main(void)
{
    kcs_error e = {0};
    (void)e;
    error_print_progname = NULL; /* glibc's error.h is the one seen */
    printf("%g\n", kcs_format_u(KCS_FMT_BF16));
    return kcs_format_u(KCS_FMT_BF16) != 0x1p-8;
}
C
cat > "$T/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(kcs REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE kcs::kcs)
CM
cmake -S "$T/consumer" -B "$T/consumer/build" -DCMAKE_PREFIX_PATH="$p" > "$T/consumer.log" 2>&1 \
  || { cat "$T/consumer.log"; fail "find_package(kcs) failed"; }
cmake --build "$T/consumer/build" > "$T/consumer-build.log" 2>&1 \
  || { cat "$T/consumer-build.log"; fail "linking against kcs::kcs failed"; }
[ "$("$T/consumer/build/consumer")" = "0.00390625" ] || fail "consumer printed the wrong u(bf16)"
readelf -d "$T/consumer/build/consumer" | grep -q 'NEEDED.*\[libkcs.so\]' || fail "consumer does not link the shared libkcs"
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
cc -std=c17 "$T/consumer/main.c" -o "$T/pc" $(pkg-config --cflags --libs kcs) \
  -Wl,-rpath,"$(pkg-config --variable=libdir kcs)" 2> "$T/pc.log" \
  || { cat "$T/pc.log"; fail "pkg-config (shared) build failed"; }
[ "$("$T/pc")" = "0.00390625" ] || fail "pkg-config consumer printed the wrong u(bf16)"
echo "install: ok"
