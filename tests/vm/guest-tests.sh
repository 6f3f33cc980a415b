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

# The driver: load (firmware boot and handshake), a node, debugfs, unload.
tap() { # tap DESCRIPTION COMMAND...
	if "${@:2}" >/tmp/tap.out 2>&1; then
		echo "ok - $1"
	else
		echo "not ok - $1"
		sed 's/^/# /' /tmp/tap.out
	fi
}
tap "npu.ko loads, boots the firmware and creates /dev/accel/accel0" scripts/npu-load
tap "the driver reports the firmware version in the kernel log" \
	sh -c 'dmesg | grep -q "npu 0000:.*: firmware 1.0.0 (API 1.0) ready"'
tap "debugfs shows the firmware log" \
	sh -c 'grep -q "npu-fw 1.0.0 (api 1.0) ready" /sys/kernel/debug/accel/*/fw_log'
tap "npu.ko unloads" scripts/npu-load unload
tap "npu.ko loads again after unloading" scripts/npu-load

# The uAPI, through the driver and the firmware (kselftest harness).
build/tests/npu_uapi_test
# libnpu, and the example program built against the installed library.
build/tests/libnpu_test
tap "examples/npu-copy (built through pkg-config) copies 1 MiB" build/examples/npu-copy
tap "npu.ko unloads after the uAPI and libnpu tests" scripts/npu-load unload

# Failure paths: a hung firmware and its recovery, rmmod under an open
# file, removal of the device with buffers open and a rescan.
tap "npu.ko loads with a 1 s job timeout" scripts/npu-load job_timeout_ms=1000
build/tests/npu_reset_test
tap "npu.ko unloads after device removal and rescan" scripts/npu-load unload

# The guest kernel must not have complained about anything we did.
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|lockdep' >/dev/null; then
	echo "not ok - guest kernel log is free of WARN, BUG, oops and lockdep reports"
	dmesg | grep -E -A5 'WARNING:|BUG:|Oops|Call Trace|lockdep' | sed 's/^/# /'
else
	echo "ok - guest kernel log is free of WARN, BUG, oops and lockdep reports"
fi
