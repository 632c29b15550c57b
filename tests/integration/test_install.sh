#!/usr/bin/env bash
# cmake --install puts kcs, libkcs, headers, kcs.pc, the CMake package,
# contracts and studies in place, and a consumer builds against both the
# CMake package and pkg-config.
source "$(dirname "$0")/lib.sh"
cmake --install "$KCS_BUILD" --prefix "$T/prefix" > "$T/install.log"
p="$T/prefix"
for f in bin/kcs lib/libkcs.a include/kcs_plugin.h include/kcs/format.h \
         lib/pkgconfig/kcs.pc lib/cmake/kcs/kcsConfig.cmake share/kcs/contracts/C-PRC-01.yaml \
         share/kcs/studies/default.yaml share/kcs/slurm/study.sbatch; do
  [ -e "$p/$f" ] || fail "not installed: $f"
done
"$p/bin/kcs" version > /dev/null
"$p/bin/kcs" lint -q "$p"/share/kcs/contracts/*.yaml || fail "installed contracts do not lint"

mkdir -p "$T/consumer"
cat > "$T/consumer/main.c" <<'C'
#include <stdio.h>
#include "format.h"
int main(void) { printf("%g\n", kcs_format_u(KCS_FMT_BF16)); return kcs_format_u(KCS_FMT_BF16) != 0x1p-8; }
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
PKG_CONFIG_PATH="$p/lib/pkgconfig" cc -std=c17 "$T/consumer/main.c" -o "$T/pc" \
  $(PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --cflags --libs --static kcs) 2> "$T/pc.log" \
  || { cat "$T/pc.log"; fail "pkg-config build failed"; }
"$T/pc" > /dev/null
echo "install: ok"
