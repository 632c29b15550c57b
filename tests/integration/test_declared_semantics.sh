#!/usr/bin/env bash
# Declared semantics drive the grading (issue 42): a plugin that declares
# oob=clamp|zero or nan=mask (kcs_plugin_declares) is graded by C-EXC-02 /
# C-EXC-01 under what it declares, the line saying so; the same kernel
# without the declaration is graded under the contracts' oob=raise /
# nan=propagate and fails; a kernel declaring one policy and doing another
# fails (tests/plugin/sig_plugin.c).
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"
grade 0 "$T/c.txt" "$P/libkcs_sig_clamp.so" C-EXC-02
has_rows "$T/c.txt" clamp '^C-EXC-02 +gather +PASS .*\[semantics oob=clamp \(declared; contract: oob=raise\)\]'
grade 3 "$T/u.txt" "$P/libkcs_sig_clampundecl.so" C-EXC-02
has_rows "$T/u.txt" clamp-undeclared '^C-EXC-02 +gather +FAIL .*oob-silently-answered.*\[semantics oob=raise\]'
grade 3 "$T/z.txt" "$P/libkcs_sig_zerodecl.so" C-EXC-02
has_rows "$T/z.txt" zero-declared '^C-EXC-02 +gather +FAIL .*oob-not-as-declared.*\[semantics oob=zero'
S=(--shape 16x16x256)
grade 0 "$T/m.txt" "$P/libkcs_sig_nanmask.so" C-EXC-01 "${S[@]}"
has_rows "$T/m.txt" nan-mask '^C-EXC-01 +gemm +PASS .*\[semantics nan=mask \(declared; contract: nan=propagate\)\]'
grade 3 "$T/mu.txt" "$P/libkcs_sig_nanmaskundecl.so" C-EXC-01 "${S[@]}"
has_rows "$T/mu.txt" nan-mask-undeclared '^C-EXC-01 +gemm +FAIL .*nan-suppressed.*\[semantics nan=propagate\]'
echo "declared semantics: ok"
