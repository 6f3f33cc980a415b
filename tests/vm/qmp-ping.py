#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""qmp-ping.py - how quickly QEMU's monitor answers while a guest runs.

  tests/vm/qmp-ping.py SOCKET

Connects to the QMP socket scripts/npu-vm opened (NPU_VM_QMP), then asks
query-status every 10 ms until QEMU goes away, timing each answer; prints
how many it asked, the median and the longest answer, and when the longest
came. A measurement, not a test: it asserts nothing.
"""
import json
import socket
import sys
import time


def main():
    path = sys.argv[1]
    sock = None
    for _ in range(1200):                       # QEMU may take a while to start
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            break
        except OSError:
            sock.close()
            sock = None
            time.sleep(0.05)
    if sock is None:
        print("qmp-ping: no monitor at %s" % path)
        return 1
    f = sock.makefile("rwb")
    start = time.monotonic()
    times = []
    worst_at = 0.0
    try:
        json.loads(f.readline())
        f.write(b'{"execute": "qmp_capabilities"}\n')
        f.flush()
        json.loads(f.readline())
        while True:
            t0 = time.monotonic()
            f.write(b'{"execute": "query-status"}\n')
            f.flush()
            while True:
                line = f.readline()
                if not line:
                    raise EOFError
                if b'"return"' in line or b'"error"' in line:
                    break
            dt = (time.monotonic() - t0) * 1000
            if not times or dt > max(times):
                worst_at = t0 - start
            times.append(dt)
            time.sleep(0.01)
    except (EOFError, OSError, ValueError):
        pass
    if not times:
        print("qmp-ping: the monitor answered nothing")
        return 1
    times.sort()
    print("QEMU's monitor: %d queries over %.0f s, median %.2f ms, longest %.2f ms "
          "(%.0f s in)" % (len(times), time.monotonic() - start, times[len(times) // 2],
                           times[-1], worst_at))
    return 0


if __name__ == "__main__":
    sys.exit(main())
