#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""migrate-test.py - a guest with NPU jobs in flight migrates to a new QEMU.

Boots the guest kernel with the NPU from an initramfs that holds the
driver, its firmware and tests/vm/npu_soak (no virtio-9p shares, as
scripts/npu-vm uses: a mounted 9p export blocks migration). The guest
starts soak workers that keep jobs in flight on all four rings, each
result checked, and says so. The VM is then migrated to a file and its
QEMU quits; a second QEMU takes the VM in and runs it on; the guest is
told to go on: the workers stop and report, and a fresh soak runs on the
migrated device. Prints TAP; exits non-zero if anything failed.

  tests/vm/migrate-test.py WORKDIR

Environment: NPU_CACHE, NPU_VM_KERNEL and NPU_VM_MEM (as scripts/npu-vm:
make check-debug boots its debug kernel), NPU_KMOD (the driver module,
default build/kmod/npu.ko).
"""
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("NPU_CACHE") or os.path.expanduser("~/.cache/npu")
QEMU = os.path.join(CACHE, "qemu-build", "qemu-system-x86_64")
KDIR = os.environ.get("NPU_VM_KERNEL") or os.path.join(CACHE, "kernel")
MEM = os.environ.get("NPU_VM_MEM") or "512"
DRM_MODULES = ["drm", "drm_kms_helper", "drm_shmem_helper", "gpu-sched"]

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmp /tmp
stty -F /dev/console -echo -onlcr 2>/dev/null
end() { echo "NPU-VM-EXIT: $1"; poweroff -f; }
# What the kernel says from here on is the test's (its boot is not).
echo "migrate-test: begin" > /dev/kmsg
for m in %(modules)s npu; do
	insmod /lib/npu/$m.ko || { echo "cannot load $m"; end 125; }
done
for i in $(seq 100); do [ -e /dev/accel/accel0 ] && break; sleep 0.1; done
NPU_SOAK_UNTIL=/tmp/stop /npu_soak 4 0 0 > /tmp/soak1 2>&1 &
pid=$!
sleep 3
echo "NPU-MIGRATE-READY"
read -r go
touch /tmp/stop
wait $pid
rc=$?
sed 's/^/SOAK1: /' /tmp/soak1
/npu_soak 2 300 0 > /tmp/soak2 2>&1
rc=$((rc | $?))
sed 's/^/SOAK2: /' /tmp/soak2
dmesg | grep -q "migrate-test: begin" || echo "DMESG: the log has lost the test's start mark"
dmesg | sed -n '/migrate-test: begin/,$p' |
	grep -E "WARNING|BUG|Oops|npu .*(timed out|crash|reset)" | sed 's/^/DMESG: /'
end $rc
"""

results = []


def tap(ok, what, detail=""):
    results.append(ok)
    print("%sok %d - %s" % ("" if ok else "not ", len(results), what), flush=True)
    for line in detail.splitlines():
        print("# " + line, flush=True)


def die(msg):
    print("Bail out! " + msg, flush=True)
    sys.exit(1)


def build_initramfs(work):
    rel = open(os.path.join(KDIR, "release")).read().strip()
    kmods = os.path.join(KDIR, "root", "lib", "modules", rel)
    root = os.path.join(work, "root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "proc", "sys", "dev", "tmp", "lib/npu", "lib/firmware/npu"):
        os.makedirs(os.path.join(root, d))
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    order = []
    for m in DRM_MODULES:
        out = subprocess.run(["modprobe", "-d", os.path.join(KDIR, "root"), "-S", rel,
                              "--show-depends", m], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            if line.startswith("builtin "):     # the debug kernel's: nothing to load
                continue
            ko = line.split()[1]
            name = os.path.basename(ko).split(".ko")[0]
            if name in order:
                continue
            order.append(name)
            dst = os.path.join(root, "lib", "npu", name + ".ko")
            if ko.endswith(".xz"):
                with open(dst, "wb") as f:
                    subprocess.run(["xz", "-dc", ko], stdout=f, check=True)
            else:
                shutil.copy(ko, dst)
    kmod = os.environ.get("NPU_KMOD") or os.path.join(REPO, "build", "kmod", "npu.ko")
    shutil.copy(kmod, os.path.join(root, "lib", "npu", "npu.ko"))
    shutil.copy(os.path.join(REPO, "build", "firmware", "npu-fw.bin"),
                os.path.join(root, "lib", "firmware", "npu", "npu-fw.bin"))
    soak = os.path.join(REPO, "build", "tests", "npu_soak")
    shutil.copy(soak, os.path.join(root, "npu_soak"))
    # Its shared libraries, where the dynamic loader looks for them.
    for line in subprocess.run(["ldd", soak], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        parts = line.split()
        path = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if not path.startswith("/"):
            continue
        for p in {path, os.path.realpath(path)}:
            dst = os.path.join(root, p.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.realpath(path), dst)
    with open(os.path.join(root, "init"), "w") as f:
        f.write(INIT % {"modules": " ".join(order)})
    os.chmod(os.path.join(root, "init"), 0o755)
    img = os.path.join(work, "initramfs.cpio.gz")
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
    cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files,
                          capture_output=True, check=True).stdout
    with open(img, "wb") as f:
        f.write(subprocess.run(["gzip", "-1"], input=cpio, capture_output=True,
                               check=True).stdout)
    return rel, img


class Console:
    """The guest's serial port, a socket QEMU listens on."""

    def __init__(self, path):
        self.sock = connect(path)
        self.buf = b""
        self.lines = []

    def read_until(self, marker, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                text = line.decode(errors="replace").rstrip("\r")
                self.lines.append(text)
                if marker in text:
                    return text
            self.sock.settimeout(max(0.1, end - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            self.buf += data
        return None

    def send(self, text):
        self.sock.sendall(text.encode())


class QMP:
    def __init__(self, path):
        self.sock = connect(path)
        self.file = self.sock.makefile("rwb")
        json.loads(self.file.readline())            # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.file.write(json.dumps(msg).encode() + b"\n")
        self.file.flush()
        while True:
            rsp = json.loads(self.file.readline())
            if "event" in rsp:
                continue
            if "error" in rsp:
                raise RuntimeError("%s: %s" % (name, rsp["error"].get("desc")))
            return rsp["return"]


def connect(path):
    for _ in range(300):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except OSError:
            s.close()
            time.sleep(0.1)
    die("cannot connect to " + path)


def start_qemu(work, tag, rel, initrd, extra):
    con = os.path.join(work, "con-%s.sock" % tag)
    qmp = os.path.join(work, "qmp-%s.sock" % tag)
    for p in (con, qmp):
        if os.path.exists(p):
            os.unlink(p)
    args = [QEMU, "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-smp", "2", "-m", MEM,
            "-nodefaults", "-display", "none", "-monitor", "none", "-no-reboot",
            "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
            "-kernel", os.path.join(KDIR, "root", "boot", "vmlinuz-" + rel),
            "-initrd", initrd,
            "-append", "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init",
            "-chardev", "socket,id=con,path=%s,server=on,wait=on" % con,
            "-serial", "chardev:con",
            "-qmp", "unix:%s,server=on,wait=off" % qmp,
            "-device", "npu"] + extra
    log = open(os.path.join(work, "qemu-%s.log" % tag), "w")
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    console = Console(con)
    return proc, console, QMP(qmp)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        return 2
    work = os.path.abspath(sys.argv[1])
    os.makedirs(work, exist_ok=True)
    if not os.access(QEMU, os.X_OK):
        die(QEMU + " not built: run 'make' first")
    print("TAP version 13\n1..8", flush=True)
    rel, initrd = build_initramfs(work)
    state = os.path.join(work, "vm.state")
    if os.path.exists(state):
        os.unlink(state)

    a, con_a, qmp_a = start_qemu(work, "a", rel, initrd, [])
    ready = con_a.read_until("NPU-MIGRATE-READY", 600)
    tap(ready is not None, "the guest loaded the driver and runs soak workers, jobs in flight",
        "" if ready else "\n".join(con_a.lines[-30:]))
    if not ready:
        a.kill()
        return 1
    t0 = time.monotonic()
    qmp_a.cmd("migrate", uri="file:" + state)
    status = None
    while time.monotonic() - t0 < 300:
        status = qmp_a.cmd("query-migrate").get("status")
        if status in ("completed", "failed", "cancelled"):
            break
        time.sleep(0.05)
    took = time.monotonic() - t0
    ok = status == "completed"
    tap(ok, "the VM and its NPU were saved to a file (%.1f MiB in %.1f s)" %
        (os.path.getsize(state) / 1048576 if os.path.exists(state) else 0, took),
        "" if ok else "status %s; QEMU's log: %s" % (status, open(
            os.path.join(work, "qemu-a.log")).read()))
    try:
        qmp_a.cmd("quit")
    except (RuntimeError, OSError, ValueError):
        pass
    a.wait(timeout=30)
    if not ok:
        return 1

    b, con_b, qmp_b = start_qemu(work, "b", rel, initrd, ["-incoming", "defer"])
    qmp_b.cmd("migrate-incoming", uri="file:" + state)
    running = False
    for _ in range(3000):
        if qmp_b.cmd("query-status").get("status") == "running":
            running = True
            break
        time.sleep(0.05)
    tap(running, "a second QEMU took the VM in from the file and runs it",
        "" if running else open(os.path.join(work, "qemu-b.log")).read())
    if not running:
        b.kill()
        return 1
    con_b.send("go\n")
    end = con_b.read_until("NPU-VM-EXIT:", 900)
    out = con_b.lines
    soak1 = [l[7:] for l in out if l.startswith("SOAK1: ")]
    soak2 = [l[7:] for l in out if l.startswith("SOAK2: ")]
    dmesg = [l[7:] for l in out if l.startswith("DMESG: ")]

    def line(lines, n):
        for l in lines:
            if l.startswith("ok %d " % n) or l.startswith("not ok %d " % n):
                return l
        return None

    for lines, n, what in ((soak1, 1, "the workers checked every result across the migration"),
                           (soak1, 2, "then the driver's object counts returned to zero"),
                           (soak2, 1, "a fresh soak on the migrated device: every result right"),
                           (soak2, 2, "and its object counts returned to zero")):
        got = line(lines, n)
        tap(got is not None and got.startswith("ok"), what,
            "\n".join(lines) if got is None or not got.startswith("ok") else
            "\n".join(l for l in lines if l.startswith("#")))
    tap(end is not None and not dmesg, "the guest ended, its kernel silent (no WARNING, BUG, "
        "reset or timeout)", "\n".join(dmesg) if end else "\n".join(out[-30:]))
    try:
        b.wait(timeout=60)
    except subprocess.TimeoutExpired:
        b.kill()
    for p in glob.glob(os.path.join(work, "*.sock")) + [state]:
        if os.path.exists(p):
            os.unlink(p)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
