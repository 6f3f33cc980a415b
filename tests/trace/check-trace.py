#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check-trace.py - check an NPU_TRACE file against the run that wrote it.

    check-trace.py TRACE.json REPORT.txt [--partial] [--runs N] [--npu-jobs]
                   [--copies]

TRACE.json is what libnpu wrote with NPU_TRACE=...; REPORT.txt is the
placement report of the same plan (npu-run --report). Checks that the file
parses as Chrome's trace-event JSON (with --partial: once its missing
closing bracket is added, as Perfetto does for a file cut short), names
its process and tracks, holds a compile, and that every node the report
places on a backend is inside a span of that backend's track, in each of
at least N runs (and in one of its own for each run, on a backend that
runs ops one by one on the host: its "BACKEND ops" track); with --npu-jobs, that NPU jobs carry their device start
and end, device time and cycles; with --copies, that copies between
backends are there. Prints what it found; exits 1 on the first failure.
"""
import json
import re
import sys


def fail(msg):
    print(f"check-trace: {msg}")
    sys.exit(1)


def load(path, partial):
    text = open(path, encoding="utf-8").read()
    if partial:
        if text.rstrip().endswith("]"):
            fail("a file cut short should have no closing bracket")
        text = text.rstrip().rstrip(",") + "\n]"
    try:
        events = json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"{path} does not parse: {e}")
    if not isinstance(events, list):
        fail("not a JSON array of events")
    return events


def placed(report):
    """Nodes the report puts on a backend, by backend name."""
    nodes = {}
    for line in open(report, encoding="utf-8"):
        m = re.match(r"^\s*(\d+)\s+(.*?)\s+(\S+)\s+\(", line)
        if m and m.group(3) not in ("none", "folded", "fused"):
            nodes.setdefault(m.group(3), set()).add(int(m.group(1)))
    if not nodes:
        fail(f"no placed nodes in {report}")
    return nodes


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        fail(__doc__)
    trace, report = args[0], args[1]
    partial = "--partial" in args
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 1
    events = load(trace, partial)
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if not any(e.get("ph") == "M" and e.get("name") == "process_name" for e in events):
        fail("no process_name")
    spans = [e for e in events if e.get("ph") == "X"]
    for e in spans:
        for k in ("pid", "tid", "name", "ts", "dur", "args"):
            if k not in e:
                fail(f"an event without {k}: {e}")
        if e["dur"] < 0 or e["tid"] not in tracks:
            fail(f"a bad span: {e}")
    if not any(tracks[e["tid"]] == "libnpu" and e["name"] == "compile" for e in spans):
        fail("no compile span")
    for backend, nodes in placed(report).items():
        covered = {}
        for e in spans:
            a = e["args"]
            if tracks[e["tid"]] == backend and "first_node" in a:
                for n in range(a["first_node"], a["last_node"] + 1):
                    covered[n] = covered.get(n, 0) + 1
        for n in sorted(nodes):
            if covered.get(n, 0) < runs:
                fail(f"node {n} ({backend}) in {covered.get(n, 0)} spans, not {runs}")
        print(f"check-trace: {len(nodes)} {backend} nodes, each in {runs}+ spans")
        # A backend that runs ops one by one on the host has a span for each.
        ops = [e["args"]["node"] for e in spans if tracks[e["tid"]] == backend + " ops"]
        if ops:
            for n in sorted(nodes):
                if ops.count(n) < runs:
                    fail(f"node {n} has {ops.count(n)} spans of its own, not {runs}")
            print(f"check-trace: each {backend} node has {runs}+ spans of its own")
    if "--npu-jobs" in args:
        jobs = [e for e in spans if tracks[e["tid"]] == "npu jobs"]
        if len(jobs) < runs:
            fail(f"{len(jobs)} NPU jobs, not {runs}")
        for e in jobs:
            a = e["args"]
            if a["state"] != "done" or a["device_end_ns"] - a["device_start_ns"] != \
                    a["device_ns"] or a["device_ns"] <= 0 or a["cycles"] <= 0:
                fail(f"an NPU job without its device times or cycles: {e}")
        print(f"check-trace: {len(jobs)} NPU jobs with device times and cycles")
    if "--copies" in args:
        copies = [e for e in spans if tracks[e["tid"]] == "copies"]
        if not copies or any(e["args"]["bytes"] <= 0 for e in copies):
            fail("no copies between backends")
        print(f"check-trace: {len(copies)} copies")
    print(f"check-trace: {len(events)} events, {len(spans)} spans on "
          f"{len(tracks)} tracks: ok")


main()
