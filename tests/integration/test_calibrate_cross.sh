#!/usr/bin/env bash
# kcs calibrate --cross: every bad implementation under every contract, the
# signature confusion matrix, each bad kernel's primary signature its own
# (parts 1 and 4 of test_calibrate.sh with --cross; label slow, see
# tests/CMakeLists.txt).
exec bash "$(dirname "$0")/test_calibrate.sh" --cross
