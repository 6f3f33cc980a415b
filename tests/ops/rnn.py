#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rnn.py make OUT | after OUT - ONNX's recurrent ops (RNN, GRU, LSTM), one node a case,
over what their attributes and inputs allow: directions, layouts,
sequence_lens known at load or at run time, initial states, peepholes,
input_forget, linear_before_reset, clip, every activation, absent and
optional outputs, and weights as initializers or as graph inputs. Each case
is a folder as ONNX's node tests lay them out (model.onnx,
test_data_set_0/input_N.pb); onnxruntime gives the expected outputs
(cases.sh). onnxruntime has no layout 1, so a layout-1 case also writes its
layout-0 twin OUT/NAME_layout0 (the same values, transposed), which
onnxruntime runs instead, and "after" transposes its outputs back into
the layout-1 case's."""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def case(out, name, kind, T=3, B=2, I=4, H=5, dir="forward", layout=0, static=True, bias=True,
         lens=None, rtlens=False, h0=False, c0=False, P=False, outs=None, seed=1, **attrs):
    D = 2 if dir == "bidirectional" else 1
    G = GATES[kind]
    rng = np.random.default_rng(seed)

    def f(*s):
        return (rng.standard_normal(s) * 0.5).astype(np.float32)

    vals = {"X": f(T, B, I), "W": f(D, G * H, I), "R": f(D, G * H, H)}
    ins = ["X", "W", "R"]
    for n, want, make in (("B", bias, lambda: f(D, 2 * G * H)),
                          ("sequence_lens", lens is not None, lambda: np.array(lens, np.int32)),
                          ("initial_h", h0, lambda: f(D, B, H)),
                          ("initial_c", c0 and kind == "LSTM", lambda: f(D, B, H)),
                          ("P", P and kind == "LSTM", lambda: f(D, 3 * H))):
        if want:
            vals[n] = make()
        ins.append(n if want else "")
    while not ins[-1]:
        ins.pop()
    if outs is None:
        outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    feed = {"X"} if static else {n for n in ins if n}
    if rtlens:
        feed.add("sequence_lens")

    def write(folder, lay):
        a = dict(hidden_size=H, direction=dir, **attrs)
        if lay:
            a["layout"] = 1
        lv = dict(vals)
        if lay:     # [B][T][I], states [B][D][H]
            for n in ("X", "initial_h", "initial_c"):
                if n in lv:
                    lv[n] = np.ascontiguousarray(vals[n].transpose(1, 0, 2))
        node = helper.make_node(kind, ins, outs, **a)
        gin, inits = [], []
        for n in ins:
            if not n:
                continue
            dt = TP.INT32 if lv[n].dtype == np.int32 else TP.FLOAT
            if n in feed:
                gin.append(helper.make_tensor_value_info(n, dt, lv[n].shape))
            else:
                inits.append(numpy_helper.from_array(lv[n], n))
        gout = [helper.make_tensor_value_info(o, TP.FLOAT, None) for o in outs if o]
        g = helper.make_graph([node], name, gin, gout, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
        os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
        onnx.save(m, os.path.join(folder, "model.onnx"))
        for i, gi in enumerate(gin):
            with open(os.path.join(folder, "test_data_set_0", "input_%d.pb" % i), "wb") as fo:
                fo.write(numpy_helper.from_array(lv[gi.name], gi.name).SerializeToString())

    write(os.path.join(out, name), layout)
    if layout:
        write(os.path.join(out, name + "_layout0"), 0)
        with open(os.path.join(out, name, "oracle"), "w") as fo:
            fo.write(name + "_layout0\n")   # onnxruntime runs this one instead


def after(out):
    """layout 1's outputs: [B][T][D][H] and [B][D][H] from layout 0's."""
    for f in glob.glob(os.path.join(out, "*_layout0", "test_data_set_0", "output_*.pb")):
        t = onnx.TensorProto()
        with open(f, "rb") as fi:
            t.ParseFromString(fi.read())
        a = numpy_helper.to_array(t)
        a = a.transpose(2, 0, 1, 3) if a.ndim == 4 else a.transpose(1, 0, 2)
        case = os.path.dirname(os.path.dirname(f))
        with open(f.replace(case, case[:-len("_layout0")]), "wb") as fo:
            fo.write(numpy_helper.from_array(np.ascontiguousarray(a), t.name).SerializeToString())


def main():
    if sys.argv[1] == "after":
        return after(sys.argv[2])
    out = sys.argv[2]
    for k in GATES:
        for d in ("forward", "reverse", "bidirectional"):
            for L in (0, 1):
                n = "%s_%s_l%d" % (k.lower(), d, L)
                case(out, n, k, dir=d, layout=L, T=4, h0=True, c0=True)
                case(out, n + "_lens", k, dir=d, layout=L, T=4, B=3, lens=[4, 2, 1], h0=True,
                     c0=True)
                case(out, n + "_lens_rt", k, dir=d, layout=L, T=4, B=3, lens=[3, 0, 4],
                     rtlens=True)
                case(out, n + "_inputs", k, dir=d, layout=L, static=False, h0=True, c0=True,
                     lens=[3, 1], rtlens=True)
        k_ = k.lower()
        case(out, k_ + "_clip", k, T=5, clip=0.7, dir="bidirectional")
        case(out, k_ + "_no_bias", k, bias=False)
        case(out, k_ + "_y_h_only", k, outs=["", "Y_h"])
        case(out, k_ + "_batch1", k, T=7, B=1, I=3, H=8)
        case(out, k_ + "_len0", k, T=3, B=3, lens=[0, 2, 3], h0=True, c0=True,
             dir="bidirectional")
        case(out, k_ + "_len0_rt", k, T=3, B=3, lens=[3, 0, 1], rtlens=True, h0=True, c0=True)
    case(out, "gru_lbr", "GRU", T=4, linear_before_reset=1, h0=True)
    case(out, "gru_lbr_no_bias", "GRU", T=4, linear_before_reset=1, bias=False)
    case(out, "gru_lbr_inputs", "GRU", T=4, linear_before_reset=1, static=False,
         dir="bidirectional")
    case(out, "gru_lbr_lens", "GRU", T=4, B=3, linear_before_reset=1, lens=[2, 4, 1],
         dir="reverse")
    case(out, "lstm_peepholes", "LSTM", T=4, P=True, h0=True, c0=True, dir="bidirectional")
    case(out, "lstm_peepholes_no_state", "LSTM", T=4, P=True)
    case(out, "lstm_input_forget", "LSTM", T=4, input_forget=1, P=True)
    case(out, "lstm_activations", "LSTM", T=3,
         activations=["HardSigmoid", "ScaledTanh", "LeakyRelu"],
         activation_alpha=[0.3, 0.8, 0.05], activation_beta=[0.4, 1.5])
    case(out, "lstm_activations_bi", "LSTM", T=3, dir="bidirectional",
         activations=["Sigmoid", "Tanh", "Tanh", "Relu", "Softsign", "Softplus"])
    case(out, "gru_elu", "GRU", T=3, activations=["Sigmoid", "Elu"], activation_alpha=[0.5])
    case(out, "rnn_relu", "RNN", T=3, activations=["Relu"])
    case(out, "rnn_affine", "RNN", T=3, activations=["Affine"], activation_alpha=[0.5],
         activation_beta=[0.1])
    case(out, "rnn_thresholded", "RNN", T=3, activations=["ThresholdedRelu"],
         activation_alpha=[0.2])
    # 100 steps: concatenations of concatenations for Y
    case(out, "lstm_long", "LSTM", T=100, B=2, I=8, H=16, dir="bidirectional")
    case(out, "lstm_all_len0", "LSTM", T=3, B=2, lens=[0, 0], h0=True)


if __name__ == "__main__":
    main()
