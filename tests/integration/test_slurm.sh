#!/usr/bin/env bash
# The Slurm templates where Slurm runs them (issue #18). A fake `sbatch`
# copies each template into a spool directory and runs the copy there with
# SLURM_* variables, as slurmd does; a fake `srun` starts the tasks
# (SLURM_PROCID/SLURM_LOCALID, and with FAKE_BIND=1 the visibility
# variables Slurm's --gpus-per-task would set); a fake `kcs` records its
# arguments and the devices each task sees. Checked: every template hands
# srun a pin-device that exists (from the submit directory's checkout, or
# from an installed share/kcs/slurm when submitted elsewhere), never one
# next to the spool copy; pin-device keeps the scheduler's variables and
# binds by node-local rank only where none are set; a missing pin-device
# stops the job before srun with a message.
source "$(dirname "$0")/lib.sh"
fake="$T/fakebin"; mkdir -p "$fake" "$T/spool" "$T/log"

cat > "$fake/sbatch" <<'SH'
#!/usr/bin/env bash
# fake sbatch: the job script runs as a copy in the spool directory
set -euo pipefail
script=$1; shift
job=$((RANDOM + 1000))
mkdir -p "$FAKE_SPOOL/job$job"
cp "$script" "$FAKE_SPOOL/job$job/slurm_script"
chmod 700 "$FAKE_SPOOL/job$job/slurm_script"
export SLURM_JOB_ID=$job SLURM_SUBMIT_DIR=$PWD SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=${FAKE_NTASKS:-3}
exec "$FAKE_SPOOL/job$job/slurm_script" "$@"
SH
cat > "$fake/srun" <<'SH'
#!/usr/bin/env bash
# fake srun: options logged and dropped; the command runs once per task
set -uo pipefail
echo "srun $*" >> "$FAKE_LOG/srun.log"
while [ $# -gt 0 ] && [[ "$1" == --* ]]; do shift; done
rc=0
for ((i = 0; i < ${SLURM_NTASKS:-1}; i++)); do
  if [ "${FAKE_BIND:-0}" = 1 ]; then
    CUDA_VISIBLE_DEVICES=$((i + 4)) SLURM_PROCID=$i SLURM_LOCALID=$i "$@" || rc=$?
  else
    SLURM_PROCID=$i SLURM_LOCALID=$i "$@" || rc=$?
  fi
done
exit $rc
SH
cat > "$fake/kcs" <<'SH'
#!/usr/bin/env bash
# fake kcs: what it was asked and which devices the task sees
echo "kcs $* | task=${SLURM_PROCID:-none} cuda=${CUDA_VISIBLE_DEVICES-unset} rocr=${ROCR_VISIBLE_DEVICES-unset} ze=${ZE_AFFINITY_MASK-unset} backends=${KCS_BACKENDS-unset}" >> "$FAKE_LOG/kcs.log"
SH
chmod +x "$fake"/*
export PATH="$fake:$PATH" FAKE_SPOOL="$T/spool" FAKE_LOG="$T/log"
export KCS=kcs # the templates' default: the kcs on PATH (here the fake)
unset CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES HIP_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ZE_AFFINITY_MASK \
      KCS_DEVICES_PER_NODE SLURM_GPUS_ON_NODE KCS_SLURM_DIR || true

for f in "$KCS_SRC"/scripts/slurm/*.sbatch "$KCS_SRC/scripts/slurm/pin-device"; do
  bash -n "$f" || fail "bash -n $f"
done
reset() { rm -f "$T/log/srun.log" "$T/log/kcs.log"; }
pin_of() { # the pin-device path srun was handed
  awk '{for (i = 2; i <= NF; i++) if ($i ~ /pin-device$/) {print $i; exit}}' "$T/log/srun.log"
}
runs() { grep -c "^kcs run " "$T/log/kcs.log" || true; }

# 1. Submitted from the checkout (kcs from PATH): each GPU template hands
#    srun the checkout's pin-device; without scheduler binding the tasks
#    are bound by node-local rank modulo SLURM_GPUS_ON_NODE.
cd "$KCS_SRC"
for tpl in hetero study; do
  reset
  SLURM_GPUS_ON_NODE=2 sbatch "scripts/slurm/$tpl.sbatch" s.yaml "$T/o.h5" > "$T/$tpl.out" 2>&1 \
    || fail "$tpl.sbatch failed: $(cat "$T/$tpl.out")"
  pin=$(pin_of)
  [ "$pin" = "$(readlink -f "$KCS_SRC/scripts/slurm/pin-device")" ] \
    || fail "$tpl: srun was handed pin-device '$pin': $(cat "$T/log/srun.log")"
  case "$pin" in "$T/spool"*) fail "$tpl: pin-device taken from the spool copy" ;; esac
  [ "$(runs)" = 3 ] || fail "$tpl: $(runs) tasks ran kcs run: $(cat "$T/log/kcs.log")"
  for i in 0 1 2; do
    d=$((i % 2))
    grep -q "^kcs run s.yaml -o $T/o.h5 | task=$i cuda=$d rocr=$d ze=$d " "$T/log/kcs.log" \
      || fail "$tpl: task $i not bound to device $d: $(cat "$T/log/kcs.log")"
  done
  grep -q "^kcs reduce $T/o.h5 " "$T/log/kcs.log" || fail "$tpl: no reduce: $(cat "$T/log/kcs.log")"
done

# 2. The scheduler bound the GPUs (--gpus-per-task): pin-device keeps them
#    and sets nothing else.
reset
FAKE_BIND=1 sbatch scripts/slurm/hetero.sbatch s.yaml "$T/o.h5" > "$T/bind.out" 2>&1 \
  || fail "hetero.sbatch (bound) failed: $(cat "$T/bind.out")"
for i in 0 1 2; do
  grep -q "^kcs run s.yaml -o $T/o.h5 | task=$i cuda=$((i + 4)) rocr=unset ze=unset " "$T/log/kcs.log" \
    || fail "task $i: the scheduler's binding was not kept: $(cat "$T/log/kcs.log")"
done

# 3. No device count known: distinct devices by node-local rank (not all 0).
reset
KCS_DEVICES_PER_NODE= sbatch scripts/slurm/study.sbatch s.yaml "$T/o.h5" > /dev/null 2>&1 || true
if ! command -v nvidia-smi > /dev/null && ! ls /dev/dri/renderD* > /dev/null 2>&1; then
  for i in 0 1 2; do
    grep -q "task=$i cuda=$i " "$T/log/kcs.log" || fail "unknown device count: task $i: $(cat "$T/log/kcs.log")"
  done
fi

# 4. cpu.sbatch: no pin-device, GPU runtimes excluded, resume when journals exist.
reset
sbatch scripts/slurm/cpu.sbatch s.yaml "$T/o.h5" > /dev/null 2>&1 || fail "cpu.sbatch failed"
grep -q "| task=0 .* backends=-cuda,-hip,-level_zero" "$T/log/kcs.log" || fail "cpu: $(cat "$T/log/kcs.log")"
mkdir -p "$T/o.h5.journal"; reset
sbatch scripts/slurm/cpu.sbatch s.yaml "$T/o.h5" > /dev/null 2>&1 || fail "cpu.sbatch (resume) failed"
grep -q "^kcs run --resume $T/o.h5 " "$T/log/kcs.log" || fail "cpu: no --resume: $(cat "$T/log/kcs.log")"
rmdir "$T/o.h5.journal"

# 5. Submitted from elsewhere with an installed kcs: share/kcs/slurm.
inst="$T/inst"; mkdir -p "$inst/bin" "$inst/share/kcs/slurm" "$T/work"
cp "$fake/kcs" "$inst/bin/kcs"
cp "$KCS_SRC"/scripts/slurm/* "$inst/share/kcs/slurm/"
cd "$T/work"
for tpl in hetero study; do
  reset
  KCS="$inst/bin/kcs" SLURM_GPUS_ON_NODE=4 sbatch "$inst/share/kcs/slurm/$tpl.sbatch" s.yaml o.h5 \
    > "$T/inst.out" 2>&1 || fail "installed $tpl.sbatch failed: $(cat "$T/inst.out")"
  [ "$(pin_of)" = "$(readlink -f "$inst/share/kcs/slurm/pin-device")" ] \
    || fail "installed $tpl: srun was handed '$(pin_of)'"
  [ "$(runs)" = 3 ] || fail "installed $tpl: $(cat "$T/log/kcs.log")"
done

# 6. No pin-device anywhere: the job stops before srun, saying where it looked.
reset
set +e
KCS="$fake/kcs" sbatch "$inst/share/kcs/slurm/hetero.sbatch" s.yaml o.h5 > "$T/none.out" 2>&1; rc=$?
set -e
[ "$rc" -ne 0 ] || fail "hetero.sbatch without pin-device exited 0"
grep -q "pin-device not found" "$T/none.out" || fail "no message: $(cat "$T/none.out")"
[ ! -e "$T/log/srun.log" ] || fail "srun ran without pin-device: $(cat "$T/log/srun.log")"
echo "slurm: ok"
