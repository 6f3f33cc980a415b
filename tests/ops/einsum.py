#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""einsum.py make OUT | after OUT - Einsum's forms past a plain product,
one node a case: diagonals (a label twice in one operand) alone, under an
ellipsis, beside a contraction; the implicit output of a diagonal (its
trace); labels one of two operands alone sums; everything summed.
onnxruntime gives the expected outputs (cases.sh)."""
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

import caselib

rng = np.random.default_rng(12)


def save(out, name, eq, shapes):
    feeds = {"x%d" % i: rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    caselib.save(out, name, [helper.make_node("Einsum", list(feeds), ["y"], equation=eq)], feeds,
                 {}, [("y", TP.FLOAT)], [("", 12)], 8)


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
