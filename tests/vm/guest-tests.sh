#!/bin/bash
# Runs inside the guest (scripts/run-checks starts it through scripts/npu-vm):
# every guest test, TAP on stdout. Needs the RAM region the kernel was told
# to reserve: NPU_VM_RESERVED_BASE, NPU_VM_RESERVED_MIB.
set -u
cd "$(dirname "$0")/../.."

if lspci -nn 2>/dev/null | grep -q 'Processing accelerators \[1200\]: .*\[1234:4e50\]'; then
	echo "ok - lspci -nn lists the npu as [1234:4e50], class [1200]"
else
	echo "not ok - lspci -nn lists the npu as [1234:4e50], class [1200]"
	lspci -nn 2>&1 | sed 's/^/# /'
fi

build/tests/vm_smoke "$NPU_VM_RESERVED_BASE" "$NPU_VM_RESERVED_MIB"

# The guest kernel must not have complained about anything we did.
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|lockdep' >/dev/null; then
	echo "not ok - guest kernel log is free of WARN, BUG, oops and lockdep reports"
	dmesg | grep -E -A5 'WARNING:|BUG:|Oops|Call Trace|lockdep' | sed 's/^/# /'
else
	echo "ok - guest kernel log is free of WARN, BUG, oops and lockdep reports"
fi
