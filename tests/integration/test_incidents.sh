#!/usr/bin/env bash
# studies/incidents/: each incident study runs under mpirun and its
# implementation of the incident shows the incident's violation signature
# in /results, while the honest ranks conform; kcs reduce reports it.
source "$(dirname "$0")/lib.sh"
mpirun_n() { local n=$1; shift; "$MPIEXEC" -n "$n" --allow-run-as-root --oversubscribe "$@"; }

run_incident() { # NAME RANKS
  mpirun_n "$2" "$KCS" run "$KCS_SRC/studies/incidents/$1/study.yaml" -o "$T/$1.h5" -q \
    || fail "$1: kcs run exited $?"
  "$KCS" reduce "$T/$1.h5" -o "$T/$1-report" -q > /dev/null 2>&1 || fail "$1: kcs reduce failed"
}

# check NAME 'rank:contract:signature ...' 'honest ranks'
check() {
  "$PYTHON" - "$T/$1.h5" "$2" "$3" <<'PY' || fail "$1: signatures"
import sys, h5py
s = lambda x: x.decode() if isinstance(x, bytes) else str(x)
path, want, honest = sys.argv[1], sys.argv[2].split(), [int(r) for r in sys.argv[3].split()]
with h5py.File(path, "r") as f:
    contract = {int(c["case_id"]): s(c["contract"]) for c in f["cases"][:]}
    rows = [r for r in f["results"][:] if s(r["status"]) != "skipped"]
    for w in want:
        rank, cid, sig = w.split(":")
        hits = [r for r in rows if int(r["rank"]) == int(rank) and contract[int(r["case_id"])] == cid
                and s(r["verdict"]) == "violation" and sig in s(r["signature"]).split(",")]
        assert hits, f"{path}: rank {rank} shows no {sig} under {cid}"
    for r in rows:
        if int(r["rank"]) in honest:
            assert s(r["verdict"]) == "within_tolerance", (path, int(r["rank"]), s(r["verdict"]),
                                                            s(r["signature"]))
PY
  local w
  for w in $2; do
    grep -q "${w##*:}" "$T/$1-report/report.md" || fail "$1: the report does not name ${w##*:}"
  done
}

# Huawei Ascend: fp32 computed with an fp16 accumulator (force_fp16) and
# with 11-bit (HF32/TF32) inputs.
run_incident ascend-precision-coercion 4
check ascend-precision-coercion \
  "1:C-PRC-01:accumulator-narrower-than-declared 2:C-PRC-03:input-rounded-to-11-bits" "0 3"

# Sakana AI CUDA Engineer: a result replayed from an earlier call, correct
# only on the benchmarked shape class.
run_incident sakana-reward-hacking 2
check sakana-reward-hacking \
  "1:C-CMP-03:stale-result-replay 1:C-CMP-03:held-out-shape-error" "0"

# AMD MI300X: out-of-range gather indices answered instead of raised.
run_incident amd-oob-silent-acceptance 2
check amd-oob-silent-acceptance "1:C-EXC-02:oob-silently-answered" "0"
echo "incidents: ok"
