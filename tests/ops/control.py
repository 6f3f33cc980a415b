#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""control.py make OUT | after OUT - ONNX's control flow as exporters write
it, one case a folder: If on a condition known at load and on one known
only at run time (both branches, each output selected), a branch returning
a value from outside, Ifs nested; Loop over a trip count with loop-carried
values and scan outputs, one that stops on a condition its body computes
from the iteration number, Loops nested; Scan with several scan inputs,
reversed directions and a scan output along axis 1. onnxruntime gives the
expected outputs (cases.sh)."""
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import caselib

rng = np.random.default_rng(9)
F, B, I64 = TP.FLOAT, TP.BOOL, TP.INT64
V = helper.make_tensor_value_info
NP = {F: np.float32, B: np.bool_, I64: np.int64}


def f(*s):
    return (rng.standard_normal(s) * 0.5).astype(np.float32)


def save(out, name, nodes, feeds, inits, outs, opset=16):
    caselib.save(out, name, nodes, feeds, inits, outs, [("", opset)])


def graph(name, nodes, ins, outs, inits=()):
    return helper.make_graph(nodes, name, ins, outs, list(inits))


def make(out):
    x = f(2, 3)
    then_g = graph("then", [helper.make_node("Mul", ["x", "two"], ["t"]),
                            helper.make_node("Relu", ["t"], ["y"])], [], [V("y", F, [2, 3])],
                   [numpy_helper.from_array(np.array(2, np.float32), "two")])
    else_g = graph("else", [helper.make_node("Sigmoid", ["x"], ["y"])], [], [V("y", F, [2, 3])])
    for cval in (True, False):
        save(out, "if_runtime_%s" % ("true" if cval else "false"),
             [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
             {"c": np.array(cval), "x": x}, {}, [("y", F)])
        save(out, "if_constant_%s" % ("true" if cval else "false"),
             [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
             {"x": x}, {"c": np.array(cval)}, [("y", F)])
    # a branch that returns an outer value; an If inside a branch
    # (onnxruntime wants an Identity between an outer value and a body's output)
    outer = graph("outer", [helper.make_node("Identity", ["x"], ["y"])], [], [V("y", F, [2, 3])])
    inner = graph("inner", [helper.make_node("If", ["c2"], ["y"], then_branch=then_g,
                                             else_branch=outer)], [], [V("y", F, [2, 3])])
    save(out, "if_nested", [helper.make_node("If", ["c"], ["y"], then_branch=inner,
                                             else_branch=else_g)],
         {"c": np.array(True), "c2": np.array(False), "x": x}, {}, [("y", F)])
    # Loop: 5 trips, v += x * i, a scan output of v each iteration
    body = graph("body", [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["x", "fi"], ["xi"]),
        helper.make_node("Add", ["v_in", "xi"], ["v_out"]),
        helper.make_node("Tanh", ["v_out"], ["s"])],
        [V("i", I64, []), V("cond_in", B, []), V("v_in", F, [2, 3])],
        [V("cond_out", B, []), V("v_out", F, [2, 3]), V("s", F, [2, 3])])
    save(out, "loop_trips", [helper.make_node("Loop", ["m", "", "v0"], ["v", "scan"], body=body)],
         {"x": x, "v0": f(2, 3)}, {"m": np.array(5, np.int64)}, [("v", F), ("scan", F)])
    save(out, "loop_trips_and_cond", [helper.make_node("Loop", ["m", "c", "v0"], ["v", "scan"],
                                                       body=body)],
         {"x": x, "v0": f(2, 3)}, {"m": np.array(3, np.int64), "c": np.array(True)},
         [("v", F), ("scan", F)])
    # stops when i >= 2: three iterations of ten
    stop = graph("stop", [
        helper.make_node("Less", ["i", "two"], ["cond_out"]),
        helper.make_node("Add", ["v_in", "x"], ["v_out"])],
        [V("i", I64, []), V("cond_in", B, []), V("v_in", F, [2, 3])],
        [V("cond_out", B, []), V("v_out", F, [2, 3])],
        [numpy_helper.from_array(np.array(2, np.int64), "two")])
    save(out, "loop_stops", [helper.make_node("Loop", ["m", "c", "v0"], ["v"], body=stop)],
         {"x": x, "v0": f(2, 3)}, {"m": np.array(10, np.int64), "c": np.array(True)}, [("v", F)])
    # a Loop in a Loop: v += x, 3 * 2 times
    in_body = graph("in", [helper.make_node("Identity", ["ci"], ["co"]),
                           helper.make_node("Add", ["w_in", "x"], ["w_out"])],
                    [V("j", I64, []), V("ci", B, []), V("w_in", F, [2, 3])],
                    [V("co", B, []), V("w_out", F, [2, 3])])
    out_body = graph("out", [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                             helper.make_node("Loop", ["m2", "", "v_in"], ["v_out"], body=in_body)],
                     [V("i", I64, []), V("cond_in", B, []), V("v_in", F, [2, 3])],
                     [V("cond_out", B, []), V("v_out", F, [2, 3])],
                     [numpy_helper.from_array(np.array(2, np.int64), "m2")])
    save(out, "loop_nested", [helper.make_node("Loop", ["m", "", "v0"], ["v"], body=out_body)],
         {"x": x, "v0": f(2, 3)}, {"m": np.array(3, np.int64)}, [("v", F)])
    # Scan: a running sum over rows of a (forward) and of b (reversed),
    # the sums stacked along axis 1 and reversed
    sbody = graph("sbody", [helper.make_node("Add", ["s_in", "ai"], ["t"]),
                            helper.make_node("Mul", ["t", "bi"], ["s_out"]),
                            helper.make_node("Identity", ["s_out"], ["o"])],
                  [V("s_in", F, [3]), V("ai", F, [3]), V("bi", F, [3])],
                  [V("s_out", F, [3]), V("o", F, [3])])
    for dirs, odir, oax in (((0, 0), 0, 0), ((0, 1), 1, 1)):
        save(out, "scan_%d%d_%d_%d" % (dirs + (odir, oax)),
             [helper.make_node("Scan", ["s0", "a", "b"], ["s", "outs"], body=sbody,
                               num_scan_inputs=2, scan_input_directions=list(dirs),
                               scan_output_directions=[odir], scan_output_axes=[oax])],
             {"s0": f(3), "a": f(5, 3), "b": f(5, 3)}, {}, [("s", F), ("outs", F)])
    # a scan input scanned along axis 1
    sb2 = graph("sb2", [helper.make_node("Add", ["s_in", "ai"], ["s_out"]),
                        helper.make_node("Identity", ["s_out"], ["o"])],
                [V("s_in", F, [2]), V("ai", F, [2])], [V("s_out", F, [2]), V("o", F, [2])])
    save(out, "scan_axis1", [helper.make_node("Scan", ["s0", "a"], ["s", "outs"], body=sb2,
                                              num_scan_inputs=1, scan_input_axes=[1])],
         {"s0": f(2), "a": f(2, 4)}, {}, [("s", F), ("outs", F)])


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
