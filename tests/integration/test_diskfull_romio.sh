#!/usr/bin/env bash
# test_diskfull.sh's disk-full sweep of `kcs run` with Open MPI's ROMIO
# (label slow, see tests/CMakeLists.txt; e2e.test_diskfull runs OMPIO's).
KCS_DISKFULL_PASSES=romio321 exec bash "$(dirname "$0")/test_diskfull.sh"
