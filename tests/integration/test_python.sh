#!/usr/bin/env bash
# The Python package (python/, import name kcs): a fresh venv with the
# system's numpy, h5py and pandas (--system-site-packages), the package
# installed as docs/python.md says (pip install --no-deps, offline: --no-index),
# then its pytest suite
# against this build's kcs. Skipped (exit 77) only when python3-venv or
# pytest is missing; scripts/setup-deps installs both.
source "$(dirname "$0")/lib.sh"
if ! "$PYTHON" -c "import ensurepip, venv" 2>/dev/null; then
  echo "SKIP: $PYTHON has no venv/ensurepip (Debian package python3-venv; scripts/setup-deps installs it)"
  exit 77
fi
if ! "$PYTHON" -c "import pytest, pandas, h5py, numpy" 2>/dev/null; then
  echo "SKIP: $PYTHON lacks pytest, pandas, h5py or numpy (python3-pytest python3-pandas python3-h5py python3-numpy; scripts/setup-deps installs them)"
  exit 77
fi
venv="$KCS_BUILD/python-venv"
rm -rf "$venv"
"$PYTHON" -m venv --system-site-packages "$venv"
# build in a copy: pip builds in-tree and would leave build/ and *.egg-info in the sources
cp -r "$KCS_SRC/python" "$T/pkg"
rm -rf "$T/pkg/build" "$T/pkg"/*.egg-info
"$venv/bin/python" -m pip install -q --no-deps --no-index "$T/pkg" > "$T/pip.log" 2>&1 \
  || { cat "$T/pip.log"; fail "pip install of the package failed"; }
where=$("$venv/bin/python" -c "import kcs, os; print(os.path.dirname(kcs.__file__))")
case "$where" in "$venv"/*) ;; *) fail "kcs imported from $where, not the venv" ;; esac
cd "$T"
KCS="$KCS" KCS_SRC="$KCS_SRC" KCS_CONTRACTS="$KCS_SRC/contracts" MPIEXEC="$MPIEXEC" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs "$KCS_SRC/python/tests"
"$venv/bin/python" "$KCS_SRC/python/examples/grade_matmul.py" --dataset-only > "$T/example.out"
grep -q "rows, one per trial" "$T/example.out" || fail "the example did not read a dataset: $(cat "$T/example.out")"
echo "python: ok"
