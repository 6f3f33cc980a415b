#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scatter.py make OUT | after OUT - ScatterND with its data, indices and
updates known only at run time, one node a case: index tuples of 1 to 3
parts into data of rank 2 to 4, negative indices, duplicates under add,
mul, max and min, int64 and float data. onnxruntime gives the expected
outputs (cases.sh)."""
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

import caselib

rng = np.random.default_rng(4)
TYPES = {np.float32: TP.FLOAT, np.int64: TP.INT64}


def save(out, name, data, idx, upd, reduction):
    feeds = {"data": data, "idx": idx, "upd": upd}
    attrs = {"reduction": reduction} if reduction != "none" else {}
    caselib.save(out, name, [helper.make_node("ScatterND", ["data", "idx", "upd"], ["y"], **attrs)],
                 feeds, {}, [("y", TYPES[data.dtype.type])], [("", 18)])


def make(out):
    for dt in (np.float32, np.int64):
        t = "f32" if dt == np.float32 else "i64"

        def arr(*s):
            return (rng.standard_normal(s) * 4).astype(dt)
        # k = 1: rows of [6][5]; k = 2 into [4][3][5]; k = 3 into [2][3][4][2] (slices of 2)
        for name, shape, idx, red in (
                ("rows", (6, 5), [[4], [0], [-1]], "none"),
                ("pairs", (4, 3, 5), [[[0, 2], [3, -3]], [[1, 1], [-4, 0]]], "none"),
                ("triples", (2, 3, 4, 2), [[1, 2, 3], [0, -1, 0]], "none"),
                ("dup_add", (6, 5), [[2], [2], [5]], "add"),
                ("dup_mul", (6, 5), [[1], [1]], "mul"),
                ("dup_max", (4, 3, 5), [[0, 2], [0, 2], [3, 1]], "max"),
                ("dup_min", (4, 3, 5), [[0, 2], [0, 2], [3, 1]], "min")):
            idx = np.array(idx, np.int64)
            k = idx.shape[-1]
            upd = arr(*(idx.shape[:-1] + shape[k:]))
            save(out, "scatternd_%s_%s" % (name, t), arr(*shape), idx, upd, red)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
