# SPDX-License-Identifier: MIT
"""python3 -m npu: the package's command line.

  python3 -m npu devices [--json]
  python3 -m npu run MODEL.onnx [--backend auto|npu|opencl|onednn|cpu]
                     [--strict] [--input NAME=FILE.npy|.pb]... [--report]
                     [--iterations N] [--output-dir DIR]

run binds each input by NAME (a .pb file without NAME= binds by the name
inside it, or by its position), runs the model once, prints each output's
name, shape, dtype and first values (with --report the placement report
first), and with --output-dir writes them as DIR/NAME.npy. As npu-run, it
loads a model whose shapes need an input's value (a Reshape's shape fed as
an input) with the values given. --iterations N runs it N times and prints
the mean time of the runs after the first.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

from . import InferenceSession, NPUError, SessionOptions, _npu, devices

_PROVIDERS = {"npu": ["NPUExecutionProvider"], "opencl": ["OpenCLExecutionProvider"],
              "onednn": ["CPUExecutionProvider"], "auto": None}


def _devices(args):
    found = devices()
    if args.json:
        print(json.dumps({"devices": found}, indent=2))
        return 0
    if not found:
        print("no NPU (no /dev/accel node of the npu driver)")
    for d in found:
        print("%d  %s  %s profile  firmware %d.%d.%d (API %d.%d)  %d rings  SRAM %d KiB  "
              "%d commands  caps 0x%x"
              % (d["index"], d["node"], d["profile"], *d["fw_version"], *d["fw_api"],
                 d["num_rings"], d["sram_size"] // 1024, len(d["commands"]), d["fw_caps"]))
    return 0


def _load_input(spec, position):
    name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
    if path.endswith(".npy"):
        if not name:
            raise SystemExit("npu: --input %s: a .npy file needs NAME=" % spec)
        return name, np.load(path)
    inner, arr = _npu.load_array(path)
    return name or inner or position, arr


def _run(args):
    opts = SessionOptions()
    if args.strict:
        opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    # libnpu's reference has no provider name: asked for by libnpu's.
    sess = InferenceSession(args.model, opts, providers=_PROVIDERS.get(args.backend),
                            npu_backend=_npu.BACKEND_CPU if args.backend == "cpu" else None)
    if args.report:
        print(sess.placement_report(), end="")
    names = [i.name for i in sess.get_inputs()]
    feed = {}
    for pos, spec in enumerate(args.input):
        key, arr = _load_input(spec, pos)
        if isinstance(key, int):
            if key >= len(names):
                raise SystemExit("npu: --input %s: the model has %d inputs" % (spec, len(names)))
            key = names[key]
        feed[key] = arr
    outs = sess.run(None, feed)
    if args.iterations > 1:
        t0 = time.perf_counter()
        for _ in range(args.iterations - 1):
            outs = sess.run(None, feed)
        dt = (time.perf_counter() - t0) / (args.iterations - 1)
        print("%d runs: %.3f ms per run after the first" % (args.iterations, dt * 1e3))
    for o, v in zip(sess.get_outputs(), outs):
        flat = v.ravel()
        print("%s %s %s %s%s" % (o.name, list(v.shape), v.dtype,
                                 np.array2string(flat[:6], precision=5, separator=" "),
                                 " ..." if flat.size > 6 else ""))
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            np.save(os.path.join(args.output_dir, o.name.replace("/", "_") + ".npy"), v)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m npu", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("devices", help="the NPUs there are")
    d.add_argument("--json", action="store_true")
    r = sub.add_parser("run", help="run an ONNX model once")
    r.add_argument("model")
    r.add_argument("--backend", default="auto", choices=["auto", "npu", "opencl", "onednn", "cpu"])
    r.add_argument("--strict", action="store_true")
    r.add_argument("--iterations", type=int, default=1, metavar="N",
                   help="run N times; print the time per run")
    r.add_argument("--input", action="append", default=[], metavar="NAME=FILE")
    r.add_argument("--report", action="store_true")
    r.add_argument("--output-dir")
    args = p.parse_args(argv)
    if args.cmd == "run" and args.iterations < 1:
        p.error("--iterations takes a number of runs, 1 or more")
    try:
        return _devices(args) if args.cmd == "devices" else _run(args)
    except (NPUError, OSError) as e:
        print("npu: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
