#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""aer-inject.py BDF UNCOR_STATUS: report an uncorrectable PCIe error of
device BDF (DDDD:BB:DD.F) to the guest's AER core, through the kernel's
aer_inject module (/dev/aer_inject), as if the device had sent it.

UNCOR_STATUS is the AER uncorrectable status bit(s): the device's severity
register says whether it is fatal (0x40000, malformed TLP, is by default;
0x8000, completer abort, is not).
"""
import os
import struct
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dom, bus, devfn = sys.argv[1].split(":")
    dev, fn = devfn.split(".")
    # struct aer_error_inj (drivers/pci/pcie/aer_inject.c): bus, dev, fn,
    # uncor_status, cor_status, header_log0..3, domain.
    req = struct.pack("BBBxIIIIIII", int(bus, 16), int(dev, 16), int(fn, 16),
                      int(sys.argv[2], 0), 0, 0, 0, 0, 0, int(dom, 16))
    fd = os.open("/dev/aer_inject", os.O_WRONLY)
    try:
        os.write(fd, req)
    finally:
        os.close(fd)


if __name__ == "__main__":
    main()
