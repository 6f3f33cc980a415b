#!/bin/bash
# SPDX-License-Identifier: MIT
# guest-tests.sh SUITE - runs inside the guest (scripts/run-checks starts it
# through scripts/npu-vm): every guest test of SUITE, as one TAP stream on
# stdout with its plan at the end; exits 1 if anything failed.
#   full  everything, on the default (full) NPU. Needs the RAM region the
#         kernel was told to reserve: NPU_VM_RESERVED_BASE, NPU_VM_RESERVED_MIB.
#   edge  on an edge NPU (-global npu.profile=edge): the profile, and graphs
#         split between the NPU and OpenCL.
#   fuzz  make fuzz: a million random ioctls.
#   soak  make soak: many processes and jobs, kills, module reloads.
#   hotplug, selfunplug  an NPU in a root port's slot (NPU_VM_ROOT_PORT=1):
#         unplugged mid-command, and by its own interrupt.
# Each program is checked by tests/tap-lib.sh: its exit status, its plan, its
# results; a missing or crashed program is a failure.
set -u
cd "$(dirname "$0")/../.."
TAP_LOGS=/tmp/guest-logs
TAP_FAIL_TAIL=1	# a failed program's last lines reach the host's results
. tests/tap-lib.sh

# tap NAME DESCRIPTION COMMAND...: one result, the command's output on failure.
tap() {
	if "${@:3}" >/tmp/tap.out 2>&1; then
		tap_ok "$1" "$2"
	else
		tap_not_ok "$1" "$2"
		sed 's/^/# /' /tmp/tap.out
	fi
}

# The guest kernel must not have complained about anything we did: what it
# printed since the tests began. Lockdep, DEBUG_OBJECTS, DMA_API_DEBUG and
# DEBUG_ATOMIC_SLEEP report through WARNING or BUG, KASAN through BUG.
# A mark in the log, not a line count: a full log buffer drops its oldest
# lines, and a count would then skip what the tests printed.
mark="guest-tests: begin $$ $(date +%s%N)"
echo "$mark" > /dev/kmsg
since_mark() { dmesg | awk -v m="$mark" 'index($0, m) { n = NR } { l[NR] = $0 }
	END { for (i = n + 1; i <= NR; i++) print l[i] }'; }
# With kmemleak (make check-debug), what the boot leaked is not ours: let
# every boot object age past kmemleak's 5 s grace, scan, and forget it.
if [ -w /sys/kernel/debug/kmemleak ]; then
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
fi
kernel_log_clean() {
	local bad='WARNING:|BUG:|Oops|Call Trace|ODEBUG:|suspected memory leak|DMA-API: .*driver'
	local what="the kernel log is free of WARN, BUG, oops, lockdep, KASAN, ODEBUG, DMA-API and kmemleak reports"

	if since_mark | grep -E "$bad" >/dev/null; then
		tap_not_ok kernel "$what"
		since_mark | grep -E -B2 -A12 "$bad" | sed 's/^/# /'
	else
		tap_ok kernel "$what"
	fi
}

suite_full() {
	if lspci -nn 2>/dev/null | grep -q 'Processing accelerators \[1200\]: .*\[1234:4e50\]'; then
		tap_ok lspci "lspci -nn lists the npu as [1234:4e50], class [1200]"
	else
		tap_not_ok lspci "lspci -nn lists the npu as [1234:4e50], class [1200]"
		lspci -nn 2>&1 | sed 's/^/# /'
	fi

	tap_run vm_smoke build/tests/vm_smoke "$NPU_VM_RESERVED_BASE" "$NPU_VM_RESERVED_MIB"

	# The driver: load (firmware boot and handshake), a node, debugfs, unload.
	tap driver "npu.ko loads, boots the firmware and creates /dev/accel/accel0" scripts/npu-load
	tap driver "the driver reports the firmware version in the kernel log" \
		sh -c 'dmesg | grep -q "npu 0000:.*: \[drm\] firmware 2.0.0 (API 2.0) ready"'
	tap driver "debugfs accel/0 (the minor) links to the folder named after the PCI device" \
		sh -c 'd=$(readlink /sys/kernel/debug/accel/0) && [ -d "/sys/kernel/debug/accel/$d" ] &&
			[ -e "/sys/bus/pci/devices/$d/accel/accel0" ]'
	tap driver "debugfs shows the firmware log" \
		sh -c 'grep -q "npu-fw 2.0.0 (api 2.0) ready" /sys/kernel/debug/accel/0/fw_log'
	# STATUS RUNNING (1), BOOT_STATUS OK (1), FW_STATUS READY (2), four rings.
	tap driver "debugfs status shows the core running, the firmware ready and four rings" \
		sh -c 'f=/sys/kernel/debug/accel/0/status;
			grep -q "^status 1 boot 1 fw_status 2 fw_error 0 heartbeat " $f &&
			[ "$(grep -c "^ring [0-3]: head " $f)" = 4 ] && grep -q "^mmu fault status " $f'
	tap driver "debugfs hang takes a boolean: 0 does nothing, a non-boolean is refused" \
		sh -c 'h=/sys/kernel/debug/accel/0/hang; echo 0 > $h &&
			! echo maybe > $h 2>/dev/null &&
			grep -q "^status 1 " /sys/kernel/debug/accel/0/status'
	tap driver "npu.ko unloads" scripts/npu-load unload
	tap smi "npu-smi (libpci) lists the NPU with no driver bound" sh -c '
		build/tools/npu-smi --json -i 0 | tee /tmp/smi.json |
		grep -q "\"vendor\": \"0x1234\", \"device\": \"0x4e50\", \"class\": \"0x1200\", \"driver\": null" ||
		{ cat /tmp/smi.json; exit 1; }'
	tap driver "npu.ko loads again after unloading" scripts/npu-load

	# The uAPI, through the driver and the firmware (kselftest harness).
	tap_run npu_uapi_test build/tests/npu_uapi_test
	tap driver "a refused ioctl says so at drm.debug=0x2 (DRIVER), with its client and error" sh -c '
		echo 0x2 >/sys/module/drm/parameters/debug &&
		build/tests/npu_uapi_test -r npu.submit_rejects_bad_arguments >/dev/null; r=$?
		echo 0 >/sys/module/drm/parameters/debug
		[ $r = 0 ] && dmesg | grep -q "\[drm:.*\] SUBMIT refused for client [0-9]*: -22"'
	# What the driver reports of the NPU's use: fdinfo and sysfs, exact.
	tap_run npu_usage_test build/tests/npu_usage_test
	# Implicit sync: fences on the BOs' reservation objects, with another
	# driver (vgem: a dma-buf and a fence it signals when told) and with
	# another process.
	tap driver "vgem (the other driver of the implicit sync tests) loads" \
		modprobe -d "$NPU_VM_KROOT" vgem
	tap_run npu_implicit_test build/tests/npu_implicit_test
	# The npu tracepoints as a user records them, with Debian's trace-cmd:
	# a faulting job's submit, run and done, its MMU fault and the
	# firmware's log line about it.
	tap trace "trace-cmd records the npu events of a faulting job" sh -c '
		d=$(mktemp -d) && trace-cmd record -q -e npu -o $d/npu.dat \
			build/tests/npu_usage_test -r usage.a_fault_counts_once >/dev/null &&
		trace-cmd report -i $d/npu.dat >$d/report &&
		for e in npu_job_submit npu_job_run npu_job_done npu_mmu_fault npu_fw_log; do
			grep -q "$e:" $d/report || { echo "no $e in:"; cat $d/report; exit 1; }
		done && grep -q "npu_job_done:.* status=3 " $d/report &&
		grep -q "npu_mmu_fault:.* va=0x7000000000 " $d/report'
	# libnpu's timeline (NPU_TRACE) of a network on the NPU: its partition
	# and each run's job with its device times and modeled cycles.
	tap trace "NPU_TRACE of test_fp32_cnn on the NPU holds its partition and jobs" sh -c '
		c=build/tests/onnx-cases/test_fp32_cnn d=$(mktemp -d) &&
		NPU_OPENCL_LIB=/nonexistent NPU_TRACE=$d/t.json build/tools/npu-run \
			$c/model.onnx --backend npu --report --input $c/test_data_set_0/input_0.pb \
			--iterations 2 >$d/report &&
		/usr/bin/python3 tests/trace/check-trace.py $d/t.json $d/report --runs 2 --npu-jobs'
	# libnpu, and the example program built against the installed library.
	tap_run libnpu_test build/tests/libnpu_test
	tap examples "examples/npu-copy (built through pkg-config) copies 1 MiB" build/examples/npu-copy
	# Documentation/getting-started.rst's programs, as the page runs them.
	tap examples "examples/first-cmdbuf: its int8 GEMM on the NPU equals the CPU reference" \
		output_has build/examples/first-cmdbuf "same as the CPU reference"
	tap examples "examples/first-graph: its dense layer and ReLU run on the NPU" \
		output_has build/examples/first-graph "^ *1 relu \(fp32\) +npu"
	onnx_on_npu
	# The Python package on the NPU: onnxruntime's API, the zoo against
	# onnxruntime's outputs, errors, leaks, threads (tests/python).
	tap_run python env NPU_PY_TAP=1 NPU_PY_PROVIDERS=NPUExecutionProvider NPU_PY_ZOO=squeezenet_int8_qdq \
		NPU_OPENCL_LIB=/nonexistent PYTHONPATH=build/python \
		/usr/bin/python3 -m pytest -p no:terminal -p no:cacheprovider tests/python
	tap python "python3 -c 'import npu' finds the NPU" sh -c \
		"PYTHONPATH=build/python /usr/bin/python3 -c 'import npu, sys; \
		sys.exit(npu.get_device() != \"NPU\" or \"NPUExecutionProvider\" not in npu.get_available_providers())'"
	# Random ioctls from processes sharing a file, dma-bufs and syncobjs
	# (make fuzz: a million); a short soak with workers killed mid-job.
	tap_run npu_fuzz build/tests/npu_fuzz 20000 1
	tap_run npu_soak build/tests/npu_soak 4 200 2
	tap driver "npu.ko unloads after the uAPI and libnpu tests" scripts/npu-load unload

	# Without fault_injection (a user's load), no debugfs file breaks the device.
	tap driver "npu.ko loads without fault injection" scripts/npu-load fault_injection=0
	tap driver "then debugfs has no inject, hang, fail_boots, recovery_hold or pm" sh -c '
		d=/sys/kernel/debug/accel/0 && [ -e $d/status ] &&
		for f in inject hang fail_boots recovery_hold pm; do
			[ ! -e $d/$f ] || { echo "$d/$f exists"; exit 1; }
		done'
	tap driver "npu.ko unloads" scripts/npu-load unload

	# Runtime PM (autosuspend_ms): idle, the firmware is stopped; a job
	# boots it again and runs right; idle again, it is stopped again.
	tap driver "npu.ko loads with runtime PM (autosuspend_ms=200)" \
		scripts/npu-load autosuspend_ms=200
	tap pm "idle, the NPU runtime-suspends; a job resumes it and runs; idle, it suspends again" sh -c '
		d=$(readlink -f /sys/class/accel/accel0/device) r=/sys/kernel/debug/accel/0/recovery
		st() { cat $d/power/runtime_status; }
		n() { awk "/^runtime_resumes/ { print \$2 }" $r; }
		sleep 1 && [ "$(st)" = suspended ] || { echo "idle: $(st)"; exit 1; }
		a=$(n) && build/examples/npu-copy && b=$(n) &&
		[ "$b" -gt "$a" ] || { echo "runtime_resumes $a then $b"; exit 1; }
		sleep 1 && [ "$(st)" = suspended ] || { echo "idle again: $(st)"; exit 1; }'
	tap driver "npu.ko unloads after the runtime PM test" scripts/npu-load unload

	# Failure paths: a hung firmware and its recovery, rmmod under an open
	# file, removal of the device with buffers open and a rescan.
	tap driver "npu.ko loads with a 1 s job timeout" scripts/npu-load job_timeout_ms=1000
	# An app's one-call ops, every result checked, while every fault kind
	# is injected three times; then 100 clean calls (built like an outside
	# app: the installed libnpu, pkg-config).
	tap_run npu_fault_workload build/tests/npu_fault_workload -r 3 -n 100
	tap_run npu_reset_test build/tests/npu_reset_test
	tap driver "npu.ko unloads after device removal and rescan" scripts/npu-load unload

	# Every branch of the timeout handler and the staged recovery, faults
	# injected through debugfs (a short timeout; bans after two hangs).
	tap driver "npu.ko loads with a 1 s job timeout and hang_limit=2" \
		scripts/npu-load job_timeout_ms=1000 hang_limit=2
	tap_run npu_recovery_test build/tests/npu_recovery_test
	tap driver "npu.ko unloads after the recovery tests" scripts/npu-load unload

	# Hostile firmware images, each refused with its reason; then the real one.
	tap_run npu_fw_test build/tests/npu_fw_test
	tap driver "npu.ko loads with the real firmware after refusing bad ones" scripts/npu-load
	tap driver "npu.ko unloads" scripts/npu-load unload
}

# PROGRAM exits 0 and prints a line matching REGEX (all it printed is shown).
output_has() { # program regex
	local out rc=0

	out=$("$1" 2>&1) || rc=$?
	echo "$out"
	[ $rc = 0 ] || { echo "$1 exited $rc"; return 1; }
	echo "$out" | grep -Eq "$2"
}

# The report of an fp32 case on the NPU: its N fp32 layers placed there.
fp32_layers_on_npu() { # case N
	local r

	r=$(NPU_OPENCL_LIB=/nonexistent build/tools/npu-run "$1/model.onnx" --backend npu \
		--report --input "$1/test_data_set_0/input_0.pb") || return
	echo "$r"
	[ "$(echo "$r" | grep -cE '^ *[0-9]+ (conv2d|max_pool|average_pool|dense) \(fp32\) +npu')" = "$2" ]
}

# ONNX through npu-onnx-test with the NPU asked for: ONNX's node tests
# (what the NPU has no command for falls back to the CPU reference: the
# guest's OpenCL is left out, as PoCL would build its program cold in the
# emulated guest), and test_onnx's cases (its host run writes them), whose
# convolutions must then have run on the NPU: the int8 ones on both
# profiles, the fp32 CNN's on the full one (the edge NPU has no fp32).
onnx_on_npu() { # [cases]: only test_onnx's cases (the edge profile)
	local cases=build/tests/onnx-cases run=build/tools/npu-run c

	[ "${1:-}" = cases ] ||
		tap_run onnx_node_npu env NPU_OPENCL_LIB=/nonexistent tests/onnx/node-tests.sh --backend npu
	tap_run onnx_cases_npu env NPU_OPENCL_LIB=/nonexistent NPU_ONNX_NODE_TESTS=$cases \
		tests/onnx/node-tests.sh --backend npu
	for c in test_qdq_residual test_qlinearconv_uint8 test_qdq_cnn test_saved_cnn; do
		tap onnx "$c: its int8 convolution (ONNX requantization) runs on the NPU" \
			sh -c "NPU_OPENCL_LIB=/nonexistent $run $cases/$c/model.onnx --backend npu \
				--report --input $cases/$c/test_data_set_0/input_0.pb |
				grep -E '^ *[0-9]+ conv2d +npu'"
	done
	[ "${1:-}" = cases ] ||
		tap onnx "test_fp32_cnn: its fp32 convolutions, pooling and dense layer run on the NPU" \
			fp32_layers_on_npu $cases/test_fp32_cnn 5
	[ "${1:-}" = cases ] ||
		tap onnx "test_fp32_depthwise_block: its three fp32 convolutions (one depthwise) run on the NPU" \
			fp32_layers_on_npu $cases/test_fp32_depthwise_block 3
	# the zoo's networks make check runs (the host made them and onnxruntime's outputs)
	if [ "${1:-}" != cases ] && [ -n "${NPU_ZOO_CHECK:-}" ] && [ ! -d "${NPU_ZOO:-}" ]; then
		tap_not_ok models_npu "the zoo ($NPU_ZOO) is visible in the guest (keep NPU_ZOO under the cache or the repository)"
		return
	fi
	[ "${1:-}" = cases ] || [ -z "${NPU_ZOO_CHECK:-}" ] ||
		tap_run models_npu env NPU_OPENCL_LIB=/nonexistent /usr/bin/python3 \
			tests/models/check.py --tap --goals --backend npu --runs 1 \
			$(for n in $NPU_ZOO_CHECK; do echo "$NPU_ZOO/$n"; done)
	# the image and sampling ops, Einsum's forms, GroupQueryAttention and
	# the classic exports' ops, lowered onto gathers, strided copies,
	# convolutions, matrix products and element functions: each case
	# strictly on the NPU against onnxruntime
	[ "${1:-}" = cases ] || [ ! -d "${NPU_OPS_CASES:-}/image" ] ||
		tap_run ops_npu onnx_test_tap --backend npu --strict "$NPU_OPS_CASES"/image/*/ \
			"$NPU_OPS_CASES"/einsum/*/ "$NPU_OPS_CASES"/gqa/*/ \
			"$NPU_OPS_CASES"/classic/*/
}

# npu-onnx-test's PASS, FAIL and SKIP lines as TAP (nothing on OpenCL).
onnx_test_tap() {
	NPU_OPENCL_LIB=/nonexistent build/tools/npu-onnx-test "$@" 2>&1 |
		awk '/^PASS /{ print "ok " ++n " - " substr($0, 6) }
		     /^(FAIL|SKIP) /{ print "not ok " ++n " - " substr($0, 6) }
		     END { print "1.." n + 0 }'
}

# make fuzz: a million random ioctls (a new seed each run, printed).
suite_fuzz() {
	tap driver "npu.ko loads" scripts/npu-load
	tap_run npu_fuzz build/tests/npu_fuzz "${NPU_FUZZ_IOCTLS:-1000000}" "$(date +%s)" 4
	tap driver "npu.ko unloads after the fuzzer" scripts/npu-load unload
}

# make soak: 16 processes x 10,000 checked jobs with workers killed in the
# middle, then 100 module reloads with work in between, the object counts
# back at zero before each unload.
suite_soak() {
	local i bad=0

	tap driver "npu.ko loads" scripts/npu-load
	tap_run npu_soak build/tests/npu_soak "${NPU_SOAK_PROCS:-16}" "${NPU_SOAK_JOBS:-10000}" 8
	# Every fault kind three times under checked one-call ops, with the
	# driver's default (10 s) job timeout, as an outside app would see it.
	tap_run npu_fault_workload build/tests/npu_fault_workload -r 3 -n 100 -w 2
	tap driver "npu.ko unloads after the soak" scripts/npu-load unload
	for i in $(seq "${NPU_SOAK_RELOADS:-100}"); do
		if ! scripts/npu-load >/tmp/reload.out 2>&1 ||
		   ! build/tests/npu_soak 2 50 0 >>/tmp/reload.out 2>&1 ||
		   ! grep -qx 'jobs 0' /sys/kernel/debug/accel/0/objects ||
		   ! scripts/npu-load unload >>/tmp/reload.out 2>&1; then
			bad=$i
			break
		fi
	done
	if [ "$bad" = 0 ]; then
		tap_ok driver "${NPU_SOAK_RELOADS:-100} module reloads with checked work in between"
	else
		tap_not_ok driver "${NPU_SOAK_RELOADS:-100} module reloads with checked work in between"
		sed 's/^/# /' /tmp/reload.out
		scripts/npu-load unload 2>/dev/null
	fi
}

suite_edge() {
	tap driver "npu.ko loads on an edge NPU" scripts/npu-load
	tap_run libnpu_test build/tests/libnpu_test -r lib.npu_profile -r lib.mixed_graph_npu_opencl
	onnx_on_npu cases
	tap driver "npu.ko unloads" scripts/npu-load unload
}

# The npu's PCI address, and the root port above it.
npu_dev() {
	local d

	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")$(cat "$d/device")" = 0x12340x4e50 ] && basename "$d" && return
	done
}
upstream_port() { basename "$(dirname "$(readlink -f "/sys/bus/pci/devices/$1")")"; }
# gone DEV: QEMU no longer has DEV within 60 s (its config space reads as
# all ones). q35 hot-plugs through ACPI: the guest learns of an unplug it
# asked for behind ACPI's back only when it looks.
gone() {
	local i

	for i in $(seq 600); do
		[ "$(setpci -s "$1" 0.l 2>/dev/null)" = ffffffff ] && return 0
		sleep 0.1
	done
	return 1
}
# forget DEV: unbind the driver from the vanished device and remove it.
forget() {
	[ ! -e "/sys/bus/pci/devices/$1/driver" ] || echo "$1" > /sys/bus/pci/drivers/npu/unbind &&
	echo 1 > "/sys/bus/pci/devices/$1/remove" && [ ! -e /dev/accel/accel0 ]
}
# ends PID: process PID ends within 300 s (an app whose NPU went away: its
# job times out after 10 s, and the driver, finding the device gone, wedges
# it and fails the job).
ends() {
	local i

	for i in $(seq 3000); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	return 1
}

# aer_recovers DEV STATUS N: report uncorrectable error STATUS of DEV to the
# AER core (aer_inject); within 20 s the core has recovered a device N times
# since the mark, the driver counted N resets, and a job runs right.
aer_recovers() {
	local i

	/usr/bin/python3 tests/vm/aer-inject.py "$1" "$2" || return 1
	for i in $(seq 200); do
		[ "$(since_mark | grep -c 'AER: device recovery successful')" = "$3" ] && break
		sleep 0.1
	done
	[ "$(since_mark | grep -c 'AER: device recovery successful')" = "$3" ] &&
		grep -qx "flrs $3" /sys/kernel/debug/accel/*/recovery &&
		output_has build/examples/first-cmdbuf "same as the CPU reference"
}

# A hot-pluggable NPU: with its driver bound, the guest powers its slot off
# through the root port's slot control (as pciehp would, without asking)
# while the heaviest command runs. QEMU unplugs the device at once: the
# engine stops at its next check (it never waits for QEMU's big lock),
# QEMU goes on, the app sees errors rather than a hang, the guest goes on.
suite_hotplug() {
	local dev port pid

	dev=$(npu_dev)
	port=$(upstream_port "$dev")
	tap hotplug "the npu sits in the slot of a PCIe root port" \
		sh -c "[ -n '$dev' ] && [ -e /sys/bus/pci/devices/$port/config ]"
	tap driver "npu.ko loads on a hot-pluggable NPU" scripts/npu-load
	# PCI error recovery, the errors injected by the guest's aer_inject: the
	# driver's handlers take the device down and boot it again; for a fatal
	# error the AER core resets the link (a secondary bus reset) between.
	tap aer "the npu has an AER capability, and aer_inject loads" sh -c "
		lspci -vvv -s $dev | grep -q 'Advanced Error Reporting' &&
		modprobe -d \"\$NPU_VM_KROOT\" aer_inject"
	tap aer "a non-fatal uncorrectable error is recovered, and a job runs right after" \
		aer_recovers "$dev" 0x8000 1
	tap aer "a fatal one resets the link, is recovered, and a job runs right after" \
		aer_recovers "$dev" 0x40000 2
	tap aer "the link reset was the root port's" \
		sh -c "dmesg | grep -q 'pcieport $port: AER: Root Port link has been reset'"
	build/tools/stall-bench /tmp/stall.json 3 >/tmp/stall.out 2>&1 &
	pid=$!
	sleep 5	# past stall-bench's 2 s yardstick: a pool command is running
	setpci -s "$port" CAP_EXP+18.w=0700:0700
	tap hotplug "powering the slot off in the middle of a heavy command unplugs the npu" \
		gone "$dev"
	tap hotplug "the app using it ends (errors, no hang)" ends "$pid"
	sed 's/^/# /' /tmp/stall.out
	tap hotplug "the driver lets go of the vanished device, and the guest removes it" \
		forget "$dev"
}

# An interrupt that unplugs its own device: every MSI-X entry of the npu
# aimed at its root port's slot control in ECAM, then a job, whose
# completion interrupt is delivered inside QEMU's call into the device and
# unplugs it there; the device is freed once that call has unwound.
suite_selfunplug() {
	local dev pid

	dev=$(npu_dev)
	tap driver "npu.ko loads on a hot-pluggable NPU" scripts/npu-load
	tap selfunplug "every MSI-X entry of the npu aimed at its root port's slot control" \
		/usr/bin/python3 tests/vm/msix-aim.py "$dev"
	build/examples/first-cmdbuf >/tmp/first.out 2>&1 &
	pid=$!
	tap selfunplug "the npu's own interrupt unplugs it, and QEMU goes on" gone "$dev"
	tap selfunplug "the app using it ends (errors, no hang)" ends "$pid"
	sed 's/^/# /' /tmp/first.out
	tap selfunplug "the driver lets go of the vanished device, and the guest removes it" \
		forget "$dev"
}

case ${1:-} in
full) suite_full ;;
edge) suite_edge ;;
fuzz) suite_fuzz ;;
soak) suite_soak ;;
hotplug) suite_hotplug ;;
selfunplug) suite_selfunplug ;;
*) echo "usage: $0 full|edge|fuzz|soak|hotplug|selfunplug" >&2; exit 2 ;;
esac
# With kmemleak in the kernel (make check-debug): a scan finds nothing.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6	# kmemleak reports only objects older than 5 s
	echo scan > /sys/kernel/debug/kmemleak
	if [ -s /sys/kernel/debug/kmemleak ] && grep -q unreferenced /sys/kernel/debug/kmemleak; then
		tap_not_ok kernel "a kmemleak scan finds no leaks"
		head -n 80 /sys/kernel/debug/kmemleak | sed 's/^/# /'
	else
		tap_ok kernel "a kmemleak scan finds no leaks"
	fi
fi
kernel_log_clean
# make coverage: the module's gcov counters (kept by the kernel after rmmod).
if [ -n "${NPU_GCOV_OUT:-}" ] && [ -d /sys/kernel/debug/gcov ]; then
	(cd /sys/kernel/debug/gcov && find . -name '*.gcda' | while read -r f; do
		mkdir -p "$NPU_GCOV_OUT/$1/$(dirname "$f")" && cat "$f" > "$NPU_GCOV_OUT/$1/$f"
	done)
fi
echo "1..$((tap_pass + tap_fail + tap_skip))"
echo "# guest: $tap_pass passed, $tap_fail failed, $tap_skip skipped"
[ "$tap_fail" = 0 ]
