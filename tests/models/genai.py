#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""genai.py [--out DIR] [--only NAMES] - decoders as onnxruntime-genai's
model builder writes them (its graphs are written node by node, not
exported; the builder itself is not installable here, so this writes its
form from the published op definitions, random weights):

  the attention mask turned into seqlens_k (ReduceSum - 1, int32) and
  total_sequence_length (its shape's dim 1), token embeddings (Gather),
  per layer SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization
  (RMS norms, the residual sum as output 3), Q, K and V projections
  (MatMul), GroupQueryAttention with rotary embeddings and the key/value
  cache (past_key_values.N.key/value in, present.N.key/value out), the
  output projection, a SiLU-gated MLP (Sigmoid, Mul), a final norm and the
  head: logits.

  llm_gqa         one new token after a cache of 7 (token generation)
  llm_gqa_prompt  a prompt of 6 tokens, no cache yet (its past of length 0)

zoo.sh makes their int4 forms (MatMulNBits) as for its other decoders."""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

VOCAB, DIM, HEADS, KV_HEADS, HEAD, INTER, LAYERS, MAX_POS = 256, 64, 4, 2, 16, 128, 2, 64
NETS = {"llm_gqa": (1, 7), "llm_gqa_prompt": (6, 0)}    # new tokens, cached ones
RECIPE = "genai.py 1\n"


def model(S, past):
    rng = np.random.default_rng(7)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
    inits, nodes = {}, []

    def init(name, v):
        inits[name] = v
        return name

    def node(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_node", domain=domain,
                                      **attrs))
        return outs[0]

    total = past + S
    # the mask's two forms GroupQueryAttention reads
    node("ReduceSum", ["attention_mask", init("one_axis", np.array([1], np.int64))], ["msum"],
         keepdims=0)
    node("Sub", ["msum", init("one64", np.array(1, np.int64))], ["msum1"])
    node("Cast", ["msum1"], ["seqlens_k"], to=TP.INT32)
    node("Shape", ["attention_mask"], ["mshape"])
    node("Gather", ["mshape", init("idx1", np.array(1, np.int64))], ["mlen"], axis=0)
    node("Cast", ["mlen"], ["total_seq_len"], to=TP.INT32)
    inv = 1.0 / 10000 ** (np.arange(HEAD // 2) * 2.0 / HEAD)
    ang = np.arange(MAX_POS)[:, None] * inv[None]
    init("cos_cache", np.cos(ang).astype(np.float32))
    init("sin_cache", np.sin(ang).astype(np.float32))
    x = node("Gather", [init("embed", w(VOCAB, DIM) * 4), "input_ids"], ["embeds"])
    residual, h, prev = x, None, None
    for i in range(LAYERS):
        p = "layers.%d." % i
        g1 = init(p + "input_layernorm.weight", (1 + 0.1 * rng.standard_normal(DIM))
                  .astype(np.float32))
        if i == 0:
            h = node("SimplifiedLayerNormalization", [x, g1], [p + "input_norm"], axis=-1,
                     epsilon=1e-5)
        else:
            node("SkipSimplifiedLayerNormalization", [residual, prev, g1],
                 [p + "input_norm", "", "", p + "input_sum"], domain="com.microsoft",
                 epsilon=1e-5)
            h, residual = p + "input_norm", p + "input_sum"
        q = node("MatMul", [h, init(p + "q_proj", w(DIM, HEADS * HEAD))], [p + "q"])
        k = node("MatMul", [h, init(p + "k_proj", w(DIM, KV_HEADS * HEAD))], [p + "k"])
        v = node("MatMul", [h, init(p + "v_proj", w(DIM, KV_HEADS * HEAD))], [p + "v"])
        node("GroupQueryAttention",
             [q, k, v, "past_key_values.%d.key" % i, "past_key_values.%d.value" % i,
              "seqlens_k", "total_seq_len", "cos_cache", "sin_cache"],
             [p + "attn", "present.%d.key" % i, "present.%d.value" % i], domain="com.microsoft",
             num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1, rotary_interleaved=0,
             scale=1.0 / np.sqrt(HEAD), local_window_size=-1)
        o = node("MatMul", [p + "attn", init(p + "o_proj", w(HEADS * HEAD, DIM))], [p + "o"])
        g2 = init(p + "post_attention_layernorm.weight", (1 + 0.1 * rng.standard_normal(DIM))
                  .astype(np.float32))
        node("SkipSimplifiedLayerNormalization", [residual, o, g2],
             [p + "post_norm", "", "", p + "post_sum"], domain="com.microsoft", epsilon=1e-5)
        residual = p + "post_sum"
        gate = node("MatMul", [p + "post_norm", init(p + "gate_proj", w(DIM, INTER))], [p + "gate"])
        up = node("MatMul", [p + "post_norm", init(p + "up_proj", w(DIM, INTER))], [p + "up"])
        sg = node("Sigmoid", [gate], [p + "gate_sig"])
        act = node("Mul", [gate, sg], [p + "silu"])
        prev = node("MatMul", [node("Mul", [act, up], [p + "gated"]),
                               init(p + "down_proj", w(INTER, DIM))], [p + "down"])
    node("SkipSimplifiedLayerNormalization",
         [residual, prev, init("norm.weight", np.ones(DIM, np.float32))],
         ["final_norm", "", "", "final_sum"], domain="com.microsoft", epsilon=1e-5)
    node("MatMul", ["final_norm", init("lm_head", w(DIM, VOCAB))], ["logits"])
    ins = [helper.make_tensor_value_info("input_ids", TP.INT64, [1, S]),
           helper.make_tensor_value_info("attention_mask", TP.INT64, [1, total])]
    outs = [helper.make_tensor_value_info("logits", TP.FLOAT, [1, "sequence_length", VOCAB])]
    for i in range(LAYERS):
        for kv in ("key", "value"):
            ins.append(helper.make_tensor_value_info("past_key_values.%d.%s" % (i, kv), TP.FLOAT,
                                                     [1, KV_HEADS, past, HEAD]))
            outs.append(helper.make_tensor_value_info("present.%d.%s" % (i, kv), TP.FLOAT,
                                                      [1, KV_HEADS, "total_sequence_length",
                                                       HEAD]))
    g = helper.make_graph(nodes, "genai_decoder", ins, outs,
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    feeds = {"input_ids": rng.integers(0, VOCAB, (1, S)).astype(np.int64),
             "attention_mask": np.ones((1, total), np.int64)}
    for i in range(LAYERS):
        for kv in ("key", "value"):
            feeds["past_key_values.%d.%s" % (i, kv)] = rng.standard_normal(
                (1, KV_HEADS, past, HEAD)).astype(np.float32)
    return m, feeds


def make(name, out):
    S, past = NETS[name]
    m, feeds = model(S, past)
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    with open(os.path.join(d, "recipe"), "w") as f:
        f.write(RECIPE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get(
        "NPU_CACHE", os.path.expanduser("~/.cache/npu")), "models"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [n for n in args.only.split(",") if n]
    for name in NETS:
        if only and name not in only:
            continue
        try:
            with open(os.path.join(args.out, name, "recipe")) as f:
                if f.read() == RECIPE:
                    continue
        except OSError:
            pass
        print("genai.py: %s" % name, file=sys.stderr)
        make(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
