#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""einsum.py make OUT | after OUT - Einsum's forms past a plain product,
one node a case: diagonals (a label twice in one operand) alone, under an
ellipsis, beside a contraction; the implicit output of a diagonal (its
trace); labels one of two operands alone sums; everything summed.
onnxruntime gives the expected outputs (cases.sh)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

rng = np.random.default_rng(12)


def save(out, name, eq, shapes):
    feeds = {"x%d" % i: rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    ins = [helper.make_tensor_value_info(k, TP.FLOAT, v.shape) for k, v in feeds.items()]
    node = helper.make_node("Einsum", list(feeds), ["y"], equation=eq)
    g = helper.make_graph([node], name, ins, [helper.make_tensor_value_info("y", TP.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 8
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())


def make(out):
    for name, eq, shapes in (
            ("diag", "ii->i", [(4, 4)]),
            ("trace", "ii", [(5, 5)]),
            ("batch_diag", "bii->bi", [(3, 4, 4)]),
            ("ellipsis_diag", "...ii->...i", [(2, 3, 4, 4)]),
            ("diag_kept", "iij->ji", [(3, 3, 5)]),
            ("diag_contracted", "ii,ij->j", [(4, 4), (4, 3)]),
            ("diag_batch_product", "bii,bij->bj", [(2, 3, 3), (2, 3, 5)]),
            ("alone_summed", "ij,kj->i", [(3, 4), (5, 4)]),
            ("alone_both", "ijk,jl->l", [(2, 3, 4), (3, 5)]),
            ("all_summed", "i,j->", [(4,), (5,)]),
            ("implicit_product", "ij,jk", [(3, 4), (4, 2)])):
        save(out, "einsum_" + name, eq, shapes)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
