#!/usr/bin/env bash
# kcs calibrate --wrap: the three-state table through the wrappers around
# the CPU backend's native kernels (part 2 of test_calibrate.sh; label slow,
# see tests/CMakeLists.txt).
exec bash "$(dirname "$0")/test_calibrate.sh" --wrap
