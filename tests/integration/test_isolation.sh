#!/usr/bin/env bash
# Kernels under test run in their own process (include/kcs_worker.h). Each
# hostile plugin of tests/plugin/hostile_plugin.c is graded: it gets a
# verdict and exit status 3, kcs never dies of a signal, its reason is kept
# whole, and its prints never reach kcs's stdout; a plugin that searches
# its own and its parent's memory for the reference finds nothing. Then a
# `kcs run` whose plugin rank crashes mid-study completes the dataset with
# that trial an error (reason stored) and exit status 3; --fail-on, --json
# and --junit of kcs run and kcs reduce report it for CI.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"
export KCS_WORKER_LOG="$T/worker.log"

# mode  expected-verdict  text the reason must hold
cases=(
  "peek     FAIL  -"
  "exit     ERROR exited with status 0"
  "abort    ERROR signal 6"
  "overrun  ERROR signal 11"
  "hang     ERROR exceeded its 1 s limit"
  "closefds ERROR the worker ended during the call"
  "chatty   PASS  -"
)
for c in "${cases[@]}"; do
  read -r mode verdict reason <<< "$c"
  lib="$P/libkcs_hostile_${mode}_plugin.so"
  set +e
  "$KCS" grade --json --junit "$T/$mode.xml" --timeout 1 "$lib" C-PRC-01 > "$T/$mode.json" 2> "$T/$mode.err"
  rc=$?
  set -e
  [ "$rc" -lt 128 ] || fail "$mode: kcs died of signal $((rc - 128))"
  want=3
  [ "$verdict" = PASS ] && want=0
  [ "$rc" = "$want" ] || { cat "$T/$mode.err"; fail "$mode: exit status $rc, expected $want"; }
  "$PYTHON" - "$T/$mode.json" "$verdict" "$reason" "$T/$mode.xml" <<'PY' || fail "$mode: wrong verdict or reason"
import json, sys, xml.etree.ElementTree as ET
doc = json.load(open(sys.argv[1]))          # the whole stdout is one JSON document
c, = doc["contracts"]
assert c["id"] == "C-PRC-01" and c["verdict"] == sys.argv[2], c
if sys.argv[3] != "-":
    assert sys.argv[3] in c["detail"], c["detail"]
    assert c["errors"] == c["trials"], c
case, = ET.parse(sys.argv[4]).getroot().iter("testcase")
kind = {"PASS": None, "FAIL": "failure", "ERROR": "error"}[sys.argv[2]]
assert [e.tag for e in case] == ([kind] if kind else []), [e.tag for e in case]
if sys.argv[3] != "-":
    assert sys.argv[3] in case.find("error").text
PY
done
grep -q "chatty plugin: gemm" "$KCS_WORKER_LOG" || fail "the chatty plugin's stdout is not in the worker log"

# The worker's limits: CPU time (a spinning kernel is killed by SIGXCPU long
# before --timeout) and address space (1 GiB cannot be reserved under 256 MiB;
# the same plugin passes without the limit).
set +e
"$KCS" grade --json --timeout 120 --worker-cpu 1 "$P/libkcs_hostile_spin_plugin.so" C-PRC-01 > "$T/spin.json" 2> /dev/null
rc_s=$?
"$KCS" grade --json --worker-mem 256 "$P/libkcs_hostile_hog_plugin.so" C-PRC-01 > "$T/hog.json" 2> /dev/null
rc_h=$?
"$KCS" grade --json "$P/libkcs_hostile_hog_plugin.so" C-PRC-01 > "$T/hog-free.json" 2> /dev/null
rc_f=$?
set -e
[ "$rc_s" = 3 ] && [ "$rc_h" = 3 ] && [ "$rc_f" = 0 ] || fail "limits: exit $rc_s $rc_h $rc_f, expected 3 3 0"
set +e
"$KCS" grade --worker-mem lots "$P/libkcs_example_plugin.so" C-PRC-01 > /dev/null 2> "$T/mem.err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "KCS_WORKER_MEM=lots: not a non-negative number" "$T/mem.err" \
  || fail "--worker-mem lots: exit $rc"
"$PYTHON" - "$T/spin.json" "$T/hog.json" <<'PY' || fail "limits: wrong reasons"
import json, sys
spin, = json.load(open(sys.argv[1]))["contracts"]
hog, = json.load(open(sys.argv[2]))["contracts"]
assert spin["verdict"] == "ERROR" and "CPU-time limit" in spin["detail"], spin
assert hog["verdict"] == "ERROR" and "malloc of 1 GiB failed" in hog["detail"], hog
PY
echo "isolation: hostile plugins graded"

# A plugin rank that crashes mid-study (SIGSEGV on its 4th call).
cat > "$T/crash.yaml" <<EOF
name: crash-mid-study
seed: 5
contracts: [$KCS_SRC/contracts/C-PRC-01.yaml]
placement:
  - { backend: plugin, plugin: $P/libkcs_example_plugin.so }
  - { backend: plugin, plugin: $P/libkcs_hostile_crash_after_plugin.so }
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[8, 8, 16], [16, 16, 32], [8, 8, 64]], inputs: [normal], trials: 2 }
EOF
set +e
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/crash.yaml" -o "$T/crash.h5" -q \
  > "$T/run.out" 2> "$T/run.err"
rc=$?
set -e
[ "$rc" = 3 ] || { cat "$T/run.err"; fail "kcs run with a crashing plugin rank: exit $rc, expected 3"; }
"$PYTHON" - "$T/crash.h5" <<'PY' || fail "the crashing rank's rows are wrong"
import sys, h5py
s = lambda x: x.decode()
with h5py.File(sys.argv[1], "r") as f:
    res = f["results"][:]
    assert len(res) == 3 * 2 * 2, len(res)
    r0 = [r for r in res if r["rank"] == 0]
    r1 = sorted((r for r in res if r["rank"] == 1), key=lambda r: (int(r["case_id"]), int(r["trial"])))
    assert all(s(r["status"]) == "ok" for r in r0), [s(r["status"]) for r in r0]
    st = [s(r["status"]) for r in r1]
    # calls 1-3 answer, the 4th kills worker 1, a fresh worker answers 5-6
    assert st == ["ok", "ok", "ok", "crashed", "ok", "ok"], st
    bad = r1[3]
    assert s(bad["verdict"]) == "error", s(bad["verdict"])
    msg = s(bad["message"])
    assert "signal 11" in msg and "worker" in msg, msg
    ranks = f["provenance/ranks"][:]
    assert all(s(x) == "ok" for x in ranks["status"]), ranks["status"]
print("isolation: crash mid-study recorded")
PY

# The same study for CI, plus a rank whose library does not exist: --fail-on
# error exits 6, the JSON summary and the JUnit report name the crashed rank
# and the unavailable one with their reasons; reduce agrees.
sed 's|^cases:|  - { backend: plugin, plugin: /nonexistent/libnothing.so }\ncases:|' "$T/crash.yaml" > "$T/ci.yaml"
set +e
"$MPIEXEC" -n 3 --allow-run-as-root --oversubscribe "$KCS" run "$T/ci.yaml" -o "$T/ci.h5" -q \
  --json --junit "$T/ci.xml" --fail-on violation,error > "$T/ci.json" 2> "$T/ci.err"
rc=$?
set -e
[ "$rc" = 6 ] || { cat "$T/ci.err"; fail "kcs run --fail-on violation,error: exit $rc, expected 6"; }
set +e
"$KCS" reduce "$T/ci.h5" -o "$T/ci-report" --no-plots --json --fail-on violation > "$T/red.json"
rc_v=$?
"$KCS" reduce "$T/ci.h5" -o "$T/ci-report" --no-plots --fail-on error > /dev/null
rc_e=$?
set -e
[ "$rc_v" = 0 ] || fail "kcs reduce --fail-on violation on a dataset without violations: exit $rc_v"
[ "$rc_e" = 6 ] || fail "kcs reduce --fail-on error on a dataset with a crash: exit $rc_e"
"$PYTHON" - "$T/ci.json" "$T/red.json" "$T/ci.xml" <<'PY' || fail "CI outputs are wrong"
import json, sys, xml.etree.ElementTree as ET
for path in sys.argv[1:3]:
    d = json.load(open(path))
    t = d["totals"]
    assert t["trials"] == 18 and t["error"] == 1 and t["unavailable"] == 6, t
    rows = {r["rank"]: r for r in d["results"]}
    assert [rows[i]["verdict"] for i in range(3)] == ["PASS", "ERROR", "ERROR"], rows
    assert "signal 11" in rows[1]["message"], rows[1]["message"]
    assert "libnothing.so" in rows[2]["message"], rows[2]["message"]
suite = ET.parse(sys.argv[3]).getroot().find("testsuite")
assert suite.get("tests") == "3" and suite.get("errors") == "2" and suite.get("failures") == "0"
cases = suite.findall("testcase")
assert cases[0].find("error") is None and "signal 11" in cases[1].find("error").text
assert "libnothing.so" in cases[2].find("error").text
print("isolation: CI outputs ok")
PY
"$PYTHON" - "$T/ci.h5" <<'PY' || fail "the unavailable rank's reason is not stored"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["provenance/ranks"][:]
    assert r["status"][2].decode() == "unavailable", r["status"]
    assert "libnothing.so" in r["why"][2].decode() and r["why"][0].decode() == "", r["why"]
PY

# A dataset written before /results.message and /provenance/ranks.why
# existed still reduces (the fields read as ""), with the same totals. Such
# a dataset also predates the content digests (docs/dataset.md): they are
# removed with the fields, and reduce reads it with a warning.
"$PYTHON" - "$T/ci.h5" "$T/old.h5" <<'PY'
import sys, shutil, h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    for obj, drop in (("results", "message"), ("provenance/ranks", "why")):
        d = f[obj]
        a, attrs, chunks, maxshape = d[:], dict(d.attrs), d.chunks, d.maxshape
        names = [n for n in a.dtype.names if n != drop]
        b = np.empty(a.shape, np.dtype({"names": names, "formats": [a.dtype.fields[n][0] for n in names]}))
        for n in names:
            b[n] = a[n]
        del f[obj]
        nd = f.create_dataset(obj, data=b, chunks=chunks, maxshape=maxshape)
        for k, v in attrs.items():
            nd.attrs[k] = v
    for k in [k for k in f.attrs if k.startswith("digest_")]:
        del f.attrs[k]
PY
"$KCS" reduce "$T/old.h5" -o "$T/old-report" --no-plots --json > "$T/old.json" \
  || fail "kcs reduce refuses a dataset without the message fields"
"$PYTHON" - "$T/old.json" "$T/red.json" <<'PY' || fail "old dataset: wrong summary"
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
assert old["totals"] == new["totals"], (old["totals"], new["totals"])
o = {r["rank"]: r["message"] for r in old["results"]}
n = {r["rank"]: r["message"] for r in new["results"]}
# without /results.message the reason is the 63-byte signature; without
# /provenance/ranks.why an unavailable rank has none
assert o[0] == "" and o[2] == "" and len(o[1]) < len(n[1]) and n[1].startswith(o[1]), (o, n)
PY
echo "isolation: datasets without the message fields still reduce"

# Workers that break the protocol at start-up (KCS_PLUGIN_WORKER replaces
# kcs-worker): kcs refuses the library (exit 2) with the reason.
printf '#!/bin/sh\necho garbage >&3\nsleep 5\n' > "$T/bad-worker.sh"
chmod +x "$T/bad-worker.sh"
for w in "$T/bad-worker.sh:not a protocol 1 HELLO" "/bin/true:ended before it said HELLO"; do
  set +e
  KCS_PLUGIN_WORKER="${w%%:*}" "$KCS" grade "$P/libkcs_example_plugin.so" C-PRC-01 > /dev/null 2> "$T/w.err"
  rc=$?
  set -e
  [ "$rc" = 2 ] && grep -q "${w#*:}" "$T/w.err" || { cat "$T/w.err"; fail "worker ${w%%:*}: exit $rc"; }
done
echo "isolation: rogue workers refused"

# kcs bench isolation at tiny sizes: one row per size, positive times (the
# box-off column and its ratio included), and the worker start line.
"$KCS" bench isolation --sizes 16,32 --reps 3 > "$T/bench.out"
cat "$T/bench.out"
"$PYTHON" - "$T/bench.out" <<'PY' || fail "bench isolation: bad table"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l.split() for l in lines if re.match(r"^\s*\d+\s", l)]
assert [r[0] for r in rows] == ["16", "32"], rows
for r in rows:
    nums = [float(x.strip("()")) for x in r[1:] if x not in ("(", ")")]
    assert len(nums) == 17 and all(x > 0 for x in nums), r
start, = [l for l in lines if l.startswith("worker start+stop")]
m = re.search(r"box ([0-9.]+) \(([0-9.]+)\), box off ([0-9.]+) \(([0-9.]+)\), box/off ([0-9.]+)", start)
assert m and all(float(x) > 0 for x in m.groups()), start
PY
set +e
"$KCS" bench isolation --sizes 0 > /dev/null 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "bench isolation --sizes 0: exit $rc, expected 2"
echo "isolation: bench ok"
