#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gqa.py make OUT - onnxruntime's GroupQueryAttention (com.microsoft), one
node a case, over what a decoder's steps bring it: a first prompt (padded
entries too), a token of a batch after it, a second prompt of one entry, a
cache longer than the tokens (a shared buffer's size), packed QKV, rotary
(halves and interleaved, a partial rotary dim), grouped and plain heads,
local_window_size, softcap, smooth_softmax, head_sink, attention_bias.
total_sequence_length is an initializer (the genai builder's graphs
compute it from the mask's shape, which libnpu folds at load); seqlens_k
is an input. onnxruntime gives the expected outputs (cases.sh)."""
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

import caselib

rng = np.random.default_rng(53)


def case(out, name, B, S, past, total, seqlens, N=4, kvN=2, H=16, packed=False, rot=None,
         bias=None, sink=False, **attrs):
    """@past: the cache's length (None: no past inputs); @seqlens: each
    entry's total length - 1; @rot: (rotary dim, interleaved) or None;
    @bias: attention_bias's [B or 1][N or 1] or None."""
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    feeds, inits = {}, {"total": np.array(total, np.int32)}
    if packed:
        feeds["qkv"] = f(B, S, (N + 2 * kvN) * H)
        ins = ["qkv", "", ""]
    else:
        feeds["q"], feeds["k"], feeds["v"] = f(B, S, N * H), f(B, S, kvN * H), f(B, S, kvN * H)
        ins = ["q", "k", "v"]
    if past is not None:
        feeds["past_k"], feeds["past_v"] = f(B, kvN, past, H), f(B, kvN, past, H)
        ins += ["past_k", "past_v"]
    else:
        ins += ["", ""]
    feeds["seqlens"] = np.array(seqlens, np.int32)
    ins += ["seqlens", "total"]
    if rot:
        rd, inter = rot
        pos = np.arange(64)[:, None] * (1.0 / 10000 ** (np.arange(rd // 2) * 2.0 / rd))[None]
        inits["cos"], inits["sin"] = np.cos(pos).astype(np.float32), np.sin(pos).astype(np.float32)
        ins += ["cos", "sin"]
        attrs.update(do_rotary=1, rotary_interleaved=inter)
    elif bias or sink:
        ins += ["", ""]
    if bias or sink:
        ins += ["", "bias" if bias else ""]	# position_ids, attention_bias
        if bias:
            feeds["bias"] = f(bias[0], bias[1], S, total)
    if sink:
        inits["sink"] = f(N)
        ins += ["sink"]
    outs = ["out", "present_k", "present_v"]
    nodes = [helper.make_node("GroupQueryAttention", ins, ["raw"] + outs[1:],
                              domain="com.microsoft", num_heads=N, kv_num_heads=kvN, **attrs)]
    # A first prompt's padding queries (s > seqlens_k[b]) read scores
    # onnxruntime's kernel never computed: their rows are not defined, and
    # the case keeps only the rows that are.
    valid = np.array([[[S != total or s <= seqlens[b]] for s in range(S)] for b in range(B)])
    inits["valid"], inits["zero"] = valid, np.zeros((), np.float32)
    nodes.append(helper.make_node("Where", ["valid", "raw", "zero"], ["out"]))
    caselib.save(out, "GroupQueryAttention_" + name, nodes, feeds, inits,
                 [(o, TP.FLOAT) for o in outs], [("", 17), ("com.microsoft", 1)], 8)


def make(out):
    case(out, "prompt", 2, 5, None, 5, [4, 4])
    case(out, "prompt_padded", 3, 6, None, 6, [5, 2, 0])
    case(out, "prompt_past_buffer", 1, 4, 8, 4, [3])
    case(out, "token", 2, 1, 6, 7, [6, 6])
    case(out, "token_ragged", 3, 1, 6, 7, [6, 3, 0])
    case(out, "token_buffer", 2, 1, 12, 7, [6, 4])
    case(out, "second_prompt", 1, 3, 4, 7, [6])
    case(out, "no_groups", 1, 4, None, 4, [3], N=2, kvN=2)
    case(out, "one_kv_head", 1, 1, 3, 4, [3], N=4, kvN=1)
    case(out, "packed", 2, 3, None, 3, [2, 1], packed=True)
    case(out, "packed_token", 1, 1, 4, 5, [4], packed=True)
    case(out, "rotary", 2, 4, None, 4, [3, 2], rot=(16, 0))
    case(out, "rotary_interleaved_token", 2, 1, 5, 6, [5, 3], rot=(16, 1))
    case(out, "rotary_partial", 1, 3, 2, 5, [4], H=32, rot=(16, 0))
    case(out, "rotary_packed", 1, 4, None, 4, [3], packed=True, rot=(16, 0))
    case(out, "window_prompt", 1, 7, None, 7, [6], local_window_size=3)
    case(out, "window_token", 2, 1, 8, 9, [8, 5], local_window_size=4)
    case(out, "softcap", 1, 5, None, 5, [4], softcap=2.0)
    case(out, "scale", 1, 1, 3, 4, [3], scale=0.3)
    case(out, "smooth_softmax", 2, 3, None, 3, [2, 1], smooth_softmax=1)
    case(out, "head_sink", 1, 1, 4, 5, [4], sink=True)
    case(out, "bias_prompt", 2, 4, None, 4, [3, 3], bias=(2, 4))
    case(out, "bias_token_broadcast", 2, 1, 3, 4, [3, 3], bias=(1, 1))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
