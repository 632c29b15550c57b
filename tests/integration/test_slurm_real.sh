#!/usr/bin/env bash
# The Slurm templates under a real single-node Slurm (issue #46, point 4):
# Debian's munged, slurmctld and slurmd (scripts/setup-deps installs
# slurm-wlm and munge; this test installs nothing), configured here for
# localhost in a temp directory, started in the background and killed on
# exit. Submitted with `sbatch --wait`: scripts/slurm/atlas.sbatch --quick
# (the quick atlas grid; checked with `kcs publish --verify` when this kcs
# has publish, else its reducer report), cpu.sbatch and study.sbatch on a
# two-rank CPU study (two tasks: the node's CPUs); not hetero.sbatch (below).
# A daemon that does not start prints its log and fails the test.
source "$(dirname "$0")/lib.sh"

for c in munged slurmctld slurmd sbatch sinfo squeue scontrol; do
  command -v "$c" > /dev/null || fail "$c not found: scripts/setup-deps installs slurm-wlm and munge"
done
S=$T/slurm
mkdir -p "$S/etc" "$S/state" "$S/spool" "$S/log" "$S/run"
pids=()
cleanup() {
  local p j
  # the jobs first (their steps would outlive slurmd), then the daemons
  if [ ${#pids[@]} -ge 3 ]; then
    for j in $(squeue -h -o %i 2> /dev/null); do scancel "$j" 2> /dev/null || true; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(squeue -h -o %i 2> /dev/null)" ] && break; sleep 0.5; done
  fi
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2> /dev/null || break; sleep 0.2; done
    kill -9 "$p" 2> /dev/null || true
  done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
show_logs() {
  local f
  for f in "$S"/log/*; do echo "--- $f"; tail -n 40 "$f"; done >&2
}
die() { show_logs; fail "$*"; }

# munge with its own key and socket
head -c 1024 /dev/urandom > "$S/etc/munge.key"
chmod 600 "$S/etc/munge.key"
munged -F --force --key-file="$S/etc/munge.key" --socket="$S/run/munge.sock" \
  --log-file="$S/log/munged.log" --pid-file="$S/run/munged.pid" --seed-file="$S/state/munge.seed" \
  > "$S/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$S/run/munge.sock" ] && break; sleep 0.1; done
[ -S "$S/run/munge.sock" ] || die "munged did not start"

# slurm.conf for localhost; ports drawn so that parallel runs do not meet
port=$((20000 + (RANDOM % 2000) * 2))
mem=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
cpus=$(nproc)
cat > "$S/etc/slurm.conf" <<EOF
ClusterName=kcsci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/run/munge.sock
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
GresTypes=gpu
NodeName=localhost CPUs=$cpus RealMemory=$mem Gres=gpu:8 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
PartitionName=nvidia Nodes=localhost MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
PartitionName=amd Nodes=localhost MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
PartitionName=intel Nodes=localhost MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
# GPUs without device files: a count the scheduler hands out (study.sbatch
# and hetero.sbatch ask --gpus-per-task=1); the studies run on the CPU
mkdir -p "$S/dev"
touch "$S"/dev/gpu{0..7}
echo "NodeName=localhost Name=gpu File=$S/dev/gpu[0-7]" > "$S/etc/gres.conf"
export SLURM_CONF=$S/etc/slurm.conf
unset SLURM_JOB_ID SLURM_NTASKS SLURM_CPUS_PER_TASK SLURM_SUBMIT_DIR || true
slurmctld -D -i > "$S/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost > "$S/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 100); do
  for p in "${pids[@]}"; do kill -0 "$p" 2> /dev/null || die "a Slurm daemon exited (pid $p)"; done
  state=$(sinfo -h -N -p debug -o %T 2> /dev/null || true)
  [ "$state" = idle ] && break
  case $state in *inval* | *drain* | *down*) die "node localhost is $state" ;; esac
  sleep 0.3
done
[ "$state" = idle ] || die "node localhost not idle after 30 s (state '$state')"
echo "slurm: node localhost idle ($cpus CPUs, ports $port-$((port + 1)))"

# sbatch --wait TEMPLATE ARGS: exit 0 and the job's own log says so
job() { # NAME SBATCH-ARGS... -- TEMPLATE ARGS...
  local name=$1 rc=0
  shift
  (cd "$KCS_SRC" && sbatch --wait --output="$T/$name.log" "$@") > "$T/$name.sbatch" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    cat "$T/$name.sbatch" "$T/$name.log" 2> /dev/null >&2 || true
    die "$name: sbatch --wait exit $rc"
  fi
  echo "$name: $(cat "$T/$name.sbatch")"
}
export KCS # the templates' kcs (default: kcs on PATH)

# 1. atlas.sbatch --quick: the bundle (or, without publish, the report)
if "$KCS" publish --help > /dev/null 2>&1; then
  job atlas scripts/slurm/atlas.sbatch --quick -o "$T/atlas"
  [ -f "$T/atlas/datapackage.json" ] || fail "atlas: no datapackage.json in the bundle"
  expect_rc 0 "$T/verify.txt" "$KCS" publish --verify "$T/atlas"
else
  echo "NOTE: this kcs has no publish command: atlas.sbatch --quick --no-publish, the report is checked"
  job atlas scripts/slurm/atlas.sbatch --quick --no-publish -o "$T/atlas"
  [ -f "$T/atlas/report.md" ] || fail "atlas: no report.md"
  n=$("$PYTHON" -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(len({(r['op'], r['dtype_in']) for r in rows}))" "$T/atlas/verdicts.csv")
  [ "$n" -ge 20 ] || fail "atlas: $n (op, dtype_in) pairs in verdicts.csv, expected the grid's 22"
fi
[ ! -e "$T/atlas.work" ] || fail "atlas: work directory left after success"
grep -q "studies done" "$T/atlas.log" || fail "atlas: no progress in the job log"

# a two-rank CPU study for the other templates
{
  study_head slurm-real 46 16 C-PRC-01
  own_ranks pairwise/fp32
  cat <<Y
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[8, 8, 64], [8, 8, 512]], inputs: [normal], trials: 2 }
Y
} > "$T/s.yaml"
dataset_ok() { # NAME H5 RANKS: every rank ran every trial (status ok), and the report exists
  "$PYTHON" - "$2" "$3" > "$T/$1.check" 2>&1 <<'PY' || { cat "$T/$1.check" "$T/$1.log"; fail "$1: dataset $2"; }
import sys
import h5py
ranks = int(sys.argv[2])
with h5py.File(sys.argv[1], "r") as f:
    assert int(f.attrs["n_ranks"]) == ranks, f.attrs["n_ranks"]
    r = f["results"][:]
    assert len(r) == 2 * ranks * 2, len(r)  # 2 cases x ranks x 2 trials
    assert sorted(set(r["rank"].tolist())) == list(range(ranks)), r["rank"]
    assert all(s == b"ok" for s in r["status"]), r["status"]
PY
  [ -f "${2%.h5}-report/report.md" ] || { cat "$T/$1.log"; fail "$1: no report ${2%.h5}-report/report.md"; }
}

# 2. cpu.sbatch (the template asks 4 tasks x 4 CPUs: this node has $cpus)
job cpu --ntasks-per-node=2 --cpus-per-task=1 scripts/slurm/cpu.sbatch "$T/s.yaml" "$T/cpu.h5"
dataset_ok cpu "$T/cpu.h5" 2

# 3. study.sbatch: one task per (counted) GPU, pin-device from the checkout
job study --ntasks-per-node=2 --cpus-per-task=1 scripts/slurm/study.sbatch "$T/s.yaml" "$T/study.h5"
dataset_ok study "$T/study.h5" 2

# hetero.sbatch is not submitted: its three groups of 2 tasks need 6 CPUs
# at once (one het job's components do not share CPUs), more than this
# node has; e2e.test_slurm keeps it (fake srun over the groups).

echo "PASS: atlas.sbatch --quick, cpu.sbatch, study.sbatch under slurmctld/slurmd"
