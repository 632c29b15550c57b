#!/usr/bin/env bash
# `kcs reduce` on randomly corrupted datasets: byte flips, overwritten
# blocks, truncations and zeroed ranges of a real dataset, and on paths that
# are not files (a FIFO, a directory, a device: refused at once). Every run must end
# by itself (no hang: 60 s limit) with exit 0, 1 or 2 -- never a signal --
# within an address-space limit (ulimit -v 3 GiB) and with a bounded peak
# RSS (reported; 1 GiB at most). --recompute-max 100000000 bounds the inputs a
# corrupted /cases row can make reduce regenerate (found: a flipped shape
# asked for 4e10 multiply-adds, legal work but minutes long). KCS_CORRUPT_COUNT sets how many (default
# 300 in CI; run a few thousand by hand: KCS_CORRUPT_COUNT=3000; failing
# inputs are copied to KCS_CORRUPT_KEEP, a directory, when set).
# No run may change its input (reduce opens it read-only).
# KCS_CORRUPT_ASLIMIT=0 drops the address-space limit (not the RSS bound):
# the sanitizer stage runs this test under ASan, whose shadow memory needs
# terabytes of address space. A sanitizer report fails a run whatever its
# exit status (ASan and UBSan exit 1, a status accepted here).
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/diskfull.yaml"
mpirun4 "$KCS" run "$study" -o "$T/clean.h5" -q
cp "$T/clean.h5" "$T/clean-copy.h5"
"$KCS" reduce "$T/clean-copy.h5" -o "$T/clean-report" --no-plots -q || fail "reduce of the clean dataset failed"
# datasets that once crashed it (tests/fuzz/regress_reduce): exit 1 or 2
for f in "$KCS_SRC"/tests/fuzz/regress_reduce/*.h5; do
  cp "$f" "$T/regress.h5"
  set +e; timeout 30 "$KCS" reduce "$T/regress.h5" -o "$T/regress-report" --no-plots -q 2> "$T/regress.err"; r=$?; set -e
  [ "$r" -eq 1 ] || [ "$r" -eq 2 ] || fail "$(basename "$f"): exit $r, expected 1 or 2: $(cat "$T/regress.err")"
  ! grep -qE "Sanitizer|runtime error:" "$T/regress.err" || fail "$(basename "$f"): $(cat "$T/regress.err")"
  cmp -s "$f" "$T/regress.h5" || fail "$(basename "$f"): a failed reduce changed its input"
done
# not a file at all: a FIFO (HDF5 would block reading it), a directory, a
# device: exit 2 at once, naming the path, and no report
mkfifo "$T/fifo.h5"
mkdir "$T/dir.h5"
for f in "$T/fifo.h5" "$T/dir.h5" /dev/zero; do
  set +e; timeout 20 "$KCS" reduce "$f" -o "$T/nf-report" --no-plots -q 2> "$T/nf.err"; r=$?; set -e
  [ "$r" -eq 2 ] || fail "reduce $f: exit $r, expected 2 (124: it hung): $(cat "$T/nf.err")"
  grep -qF "$f: not a regular file" "$T/nf.err" || fail "reduce $f: $(cat "$T/nf.err")"
  [ ! -e "$T/nf-report" ] || fail "reduce $f left a report"
done
"$PYTHON" - "$KCS" "$T" "${KCS_CORRUPT_COUNT:-300}" <<'PY'
import os, random, resource, shutil, subprocess, sys
kcs, tmp, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
clean = open(os.path.join(tmp, "clean.h5"), "rb").read()
rng = random.Random(int(os.environ.get("KCS_CORRUPT_SEED", "16")))
aslimit = os.environ.get("KCS_CORRUPT_ASLIMIT", "1") != "0"
def limit():
    if aslimit:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
codes, worst_rss, bad = {}, 0, []
path = os.path.join(tmp, "c.h5")
for i in range(count):
    b = bytearray(clean)
    kind = rng.choice(["flips", "block", "truncate", "zeros", "flips"])
    if kind == "flips":
        for _ in range(rng.randint(1, 32)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == "block":
        at = rng.randrange(len(b)); n = rng.randint(8, 512)
        b[at:at + n] = bytes(rng.randrange(256) for _ in range(min(n, len(b) - at)))
    elif kind == "truncate":
        b = b[:rng.randrange(len(b))]
    else:
        at = rng.randrange(len(b)); n = rng.randint(8, 4096)
        b[at:at + n] = bytes(min(n, len(b) - at))
    open(path, "wb").write(b)
    shutil.rmtree(os.path.join(tmp, "r"), ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    try:
        p = subprocess.run([kcs, "reduce", path, "-o", os.path.join(tmp, "r"), "--no-plots", "-q", "--recompute-max", "100000000"], preexec_fn=limit,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = "hang"
    worst_rss = max(worst_rss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    if open(path, "rb").read() != bytes(b):  # reduce opens its input read-only
        rc = "changed its input"
    codes[rc] = codes.get(rc, 0) + 1
    if rc != "hang" and (b"Sanitizer" in p.stderr or b"runtime error:" in p.stderr):
        rc = "sanitizer"
    if rc not in (0, 1, 2):
        keep = os.path.join(os.environ.get("KCS_CORRUPT_KEEP", tmp), f"crash-{i}.h5")
        shutil.copy(path, keep)
        bad.append((i, kind, rc, p.stderr.decode(errors="replace")[-300:] if rc != "hang" else ""))
print(f"reduce on {count} corrupted datasets: exit statuses {codes}, peak RSS {worst_rss // 1024} MiB")
for i, kind, rc, err in bad[:10]:
    print(f"  #{i} ({kind}): {rc} {err}", file=sys.stderr)
if bad:
    sys.exit(1)
if worst_rss > (1 << 20):
    print(f"peak RSS {worst_rss // 1024} MiB above 1 GiB", file=sys.stderr)
    sys.exit(1)
PY
echo "reduce_corrupt: ok"
