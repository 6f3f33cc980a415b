# SPDX-License-Identifier: MIT
"""caselib.py - what every generator of tests/ops writes a case with: the
model of its nodes and the test set of its inputs, as ONNX's node tests
are laid out (DIR/NAME/model.onnx, DIR/NAME/test_data_set_0/input_N.pb);
cases.sh has onnxruntime write the expected outputs beside them."""
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

TYPES = {np.float32: TP.FLOAT, np.uint8: TP.UINT8, np.int8: TP.INT8, np.int32: TP.INT32,
         np.int64: TP.INT64, np.bool_: TP.BOOL}


def save(out, name, nodes, feeds, inits, outs, opsets, ir_version=None):
    """Case @name in @out: @nodes reading the graph inputs @feeds (name:
    array, in order) and the initializers @inits (name: array), writing
    @outs ((name, ONNX type) pairs, shapes left to inference), under
    @opsets ((domain, version) pairs)."""
    ins = [helper.make_tensor_value_info(k, TYPES[v.dtype.type], v.shape)
           for k, v in feeds.items()]
    g = helper.make_graph(nodes, name, ins,
                          [helper.make_tensor_value_info(o, t, None) for o, t in outs],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    if ir_version:
        m.ir_version = ir_version
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
