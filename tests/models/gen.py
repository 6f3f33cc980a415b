#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gen.py [--out DIR] [--only NAME,...] - the model zoo: networks made with
Debian's python3-torch and python3-torchvision (random weights, fixed
seeds), exported by torch.onnx.export (opset 13) unchanged, each in ONNX's
test-case layout: DIR/NAME/model.onnx and DIR/NAME/test_data_set_0/input_N.pb.
The expected outputs are not made here: ort-run.js runs each model with
onnxruntime (npm's onnxruntime-node), which shares no code with libnpu.

int8 networks come two ways, as people make them:
  - torch's own: torchvision's quantizable models, prepared, calibrated and
    converted with the qnnpack engine, then exported (QDQ around torch's
    quantized ops, Cast and ConstantOfShape around scales and zero points);
  - quantize.py's static QDQ quantization of the fp32 export, written as
    onnxruntime's quantize_static writes it, and its dynamic quantization
    of transformers (DynamicQuantizeLinear -> MatMulInteger).
A model already made is kept (the cache); delete its folder to remake it.
torch's int8 networks are made again when their recipe changes (the file
"recipe" in each folder says which made it).
"""
import argparse
import math
import os
import shutil
import sys
import warnings

warnings.filterwarnings("ignore")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
from onnx import numpy_helper  # noqa: E402

torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
tv = torchvision.models


class Bert(torch.nn.Module):
    """A BERT-style encoder: token and position embeddings, an attention
    mask from the input (1 keep, 0 pad) as Hugging Face's models take it,
    layer norm, GELU feed-forward, a classifier on the first token."""

    def __init__(self, vocab=1000, seq=16, dim=64, heads=4, layers=2, classes=10):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Embedding(seq, dim)
        self.norm = torch.nn.LayerNorm(dim)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0,
                                                 activation="gelu", batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.cls = torch.nn.Linear(dim, classes)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.norm(self.tok(input_ids) + self.pos(pos))
        x = self.enc(x, src_key_padding_mask=attention_mask == 0)
        return self.cls(x[:, 0])


class UpNet(torch.nn.Module):
    """A small encoder-decoder as segmentation and super-resolution networks
    are built: reflection and replicate padding, a strided convolution down,
    nearest upsampling back with a skip connection, and a bilinear resize of
    the logits to the output's size."""

    def __init__(self, classes=5):
        super().__init__()
        c = torch.nn.Conv2d
        self.pad = torch.nn.ReflectionPad2d(2)
        self.c1 = c(3, 16, 5)
        self.bn = torch.nn.BatchNorm2d(16)
        self.c2 = c(16, 32, 3, stride=2, padding=1)
        self.c3 = c(32, 32, 3, padding=1, padding_mode="replicate")
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.c4 = c(48, 16, 3, padding=1)
        self.out = c(16, classes, 1)

    def forward(self, x):
        f = torch.nn.functional
        a = f.relu(self.bn(self.c1(self.pad(x))))
        b = f.relu(self.c3(f.relu(self.c2(a))))
        y = f.relu(self.c4(torch.cat([self.up(b), a], 1)))
        return f.interpolate(self.out(y), size=(80, 80), mode="bilinear", align_corners=False)


class NormNet(torch.nn.Module):
    """Normalizations and activations the zoo's others lack, as generative
    and super-resolution networks use them: PReLU, instance and group
    normalization, ELU, SELU, Softplus, Mish, a channel gate from a global
    max pool, and a pixel shuffle (DepthToSpace) up."""

    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.c1 = c(3, 16, 3, padding=1)
        self.pr = torch.nn.PReLU(16)
        self.inorm = torch.nn.InstanceNorm2d(16, affine=True)
        self.c2 = c(16, 32, 3, stride=2, padding=1)
        self.gn = torch.nn.GroupNorm(4, 32)
        self.c3 = c(32, 32, 3, padding=1)
        self.gate = c(32, 32, 1)
        self.c4 = c(32, 4 * 8, 3, padding=1)
        self.out = c(8, 3, 3, padding=1)

    def forward(self, x):
        f = torch.nn.functional
        a = self.pr(self.inorm(self.c1(x)))
        b = f.elu(self.gn(self.c2(a)))
        b = f.selu(self.c3(b)) + f.softplus(b) - f.mish(b)
        b = b * torch.sigmoid(self.gate(f.adaptive_max_pool2d(b, 1)))
        return self.out(f.pixel_shuffle(self.c4(b), 2))


class KeywordSpotter(torch.nn.Module):
    """A recurrent speech model as keyword spotters are built: a Conv1d over
    40 MFCC bands, then an LSTM (two layers, batch first) or a
    bidirectional GRU over the 49 frames, and a classifier of the last
    frame's state into 12 keywords."""

    def __init__(self, cell="lstm"):
        super().__init__()
        self.conv = torch.nn.Conv1d(40, 64, 3, padding=1)
        if cell == "lstm":
            self.rnn = torch.nn.LSTM(64, 48, num_layers=2, batch_first=True)
        else:
            self.rnn = torch.nn.GRU(64, 48, bidirectional=True, batch_first=True)
        self.fc = torch.nn.Linear(48 * (1 if cell == "lstm" else 2), 12)

    def forward(self, x):
        y = torch.relu(self.conv(x)).permute(0, 2, 1)
        out, _ = self.rnn(y)
        return torch.log_softmax(self.fc(out[:, -1]), -1)


class ControlNet(torch.nn.Module):
    """Control flow as torch.jit.script exports it: a Loop over the
    sequence's steps (its trip count from the input's shape) carrying a
    state, and an If on a value known only at run time."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.Linear(16, 16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.zeros(1, 16)
        for t in range(x.size(1)):
            h = torch.tanh(self.cell(x[:, t] + h))
        if bool(h.sum() > 0):
            h = h * 2
        else:
            h = -h
        return torch.log_softmax(self.head(h), -1)


class Gpt(torch.nn.Module):
    """A GPT-style decoder as torch exports it: token and position
    embeddings, two blocks of causal self-attention (the mask a triangle
    made with triu: Trilu) and a GELU MLP, pre-norm, tied head."""

    def __init__(self, vocab=512, seq=16, dim=64, heads=4, layers=2):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.heads = heads
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(torch.nn.ModuleDict({
                "ln1": torch.nn.LayerNorm(dim), "qkv": torch.nn.Linear(dim, 3 * dim),
                "proj": torch.nn.Linear(dim, dim), "ln2": torch.nn.LayerNorm(dim),
                "fc1": torch.nn.Linear(dim, 4 * dim), "fc2": torch.nn.Linear(4 * dim, dim)}))
        self.ln = torch.nn.LayerNorm(dim)

    def forward(self, ids):
        b, s = ids.shape
        x = self.tok(ids) + self.pos[:s]
        causal = torch.triu(torch.full((s, s), float("-inf")), 1)
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](x)).chunk(3, -1)
            q, k, v = [t.reshape(b, s, self.heads, -1).transpose(1, 2) for t in (q, k, v)]
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + causal, -1)
            x = x + blk["proj"]((att @ v).transpose(1, 2).reshape(b, s, -1))
            x = x + blk["fc2"](torch.nn.functional.gelu(blk["fc1"](blk["ln2"](x))))
        return self.ln(x) @ self.tok.weight.t()


class MoE(torch.nn.Module):
    """A mixture of experts with top-2 routing: the gate's softmax, TopK,
    the two weights scattered into a dense [tokens][experts] map
    (ScatterElements), each expert's MLP weighted by its column."""

    def __init__(self, dim=32, experts=4):
        super().__init__()
        self.gate = torch.nn.Linear(dim, experts)
        self.experts = torch.nn.ModuleList(torch.nn.Sequential(
            torch.nn.Linear(dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, dim))
            for _ in range(experts))

    def forward(self, x):
        g = torch.softmax(self.gate(x), -1)
        top, idx = torch.topk(g, 2, -1)
        w = torch.zeros_like(g).scatter(-1, idx, top / top.sum(-1, keepdim=True))
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            y = y + w[:, e:e + 1] * expert(x)
        return y


class Gnn(torch.nn.Module):
    """A graph network's message passing: each edge's message from its
    source node's features, summed into its destination (scatter_add:
    ScatterElements with reduction add), two rounds, a readout."""

    def __init__(self, nodes=12, dim=16):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.register_buffer("src", torch.randint(0, nodes, (40,), generator=g))
        self.register_buffer("dst", torch.randint(0, nodes, (40,), generator=g))
        self.msg = torch.nn.ModuleList(torch.nn.Linear(dim, dim) for _ in range(2))
        self.upd = torch.nn.ModuleList(torch.nn.Linear(2 * dim, dim) for _ in range(2))
        self.out = torch.nn.Linear(dim, 3)

    def forward(self, h):
        for m, u in zip(self.msg, self.upd):
            msg = m(h[self.src])
            agg = torch.zeros_like(h).scatter_add(0, self.dst[:, None].expand_as(msg), msg)
            h = torch.relu(u(torch.cat([h, agg], -1)))
        return self.out(h.mean(0, keepdim=True))


def mfcc():
    return (torch.rand(1, 40, 49) * 2 - 1,)


def vit():
    return tv.vision_transformer.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
        num_classes=10)


def image(n=224):
    return (torch.rand(1, 3, n, n) * 2 - 1,)


def tokens():
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(1, 1000, (1, 16), generator=g)
    mask = torch.ones(1, 16, dtype=torch.int64)
    mask[0, 12:] = 0          # the last four tokens are padding
    return (ids, mask)


# name: (constructor, inputs, input names[, opset: 13 by default])
FP32 = {
    "resnet50": (lambda: tv.resnet50(), image, ["input"]),
    "mobilenet_v2": (lambda: tv.mobilenet_v2(), image, ["input"]),
    "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(), image, ["input"]),
    "efficientnet_b0": (lambda: tv.efficientnet_b0(), image, ["input"]),
    "shufflenet_v2": (lambda: tv.shufflenet_v2_x1_0(), image, ["input"]),
    "squeezenet": (lambda: tv.squeezenet1_1(), image, ["input"]),
    # grouped convolutions (8 channels a group) and squeeze-excite
    "regnet_y_400mf": (lambda: tv.regnet_y_400mf(), image, ["input"]),
    "vit": (vit, lambda: image(32), ["input"]),
    "bert": (Bert, tokens, ["input_ids", "attention_mask"]),
    "upnet": (UpNet, lambda: image(64), ["input"]),
    "normnet": (NormNet, lambda: image(48), ["input"]),
    "kws_lstm": (lambda: KeywordSpotter("lstm"), mfcc, ["input"]),
    "kws_gru": (lambda: KeywordSpotter("gru"), mfcc, ["input"]),
    "controlnet": (lambda: torch.jit.script(ControlNet()), lambda: (torch.rand(1, 12, 16),),
                   ["input"]),
    "gpt": (Gpt, lambda: (torch.randint(0, 512, (1, 16), generator=torch.Generator()
                                        .manual_seed(5)),), ["input_ids"], 14),
    "moe": (MoE, lambda: (torch.rand(8, 32) * 2 - 1,), ["input"]),
    "gnn": (Gnn, lambda: (torch.rand(12, 16) * 2 - 1,), ["input"], 16),
}

# torchvision's quantizable models, quantized by torch (qnnpack)
TORCH_INT8 = {
    "resnet18_int8_torch": lambda: tv.quantization.resnet18(quantize=False),
    "mobilenet_v2_int8_torch": lambda: tv.quantization.mobilenet_v2(quantize=False),
    "resnet50_int8_torch": lambda: tv.quantization.resnet50(quantize=False),
    # (torch 1.13 cannot export its quantized ShuffleNetV2: chunk of a quantized tensor)
}


def save_case(folder, model_fn, inputs, names, dynamic=False):
    case = os.path.join(folder, "test_data_set_0")
    os.makedirs(case, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    # with gradients on, as a script exports: torch's fused attention (its
    # inference fast path) has no ONNX form
    model_fn(path)
    for i, (name, x) in enumerate(zip(names, inputs)):
        t = numpy_helper.from_array(x.numpy(), name)
        with open(os.path.join(case, "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())


def export(model, inputs, names, opset=13):
    def write(path):
        torch.onnx.export(model, inputs, path, opset_version=opset, input_names=names,
                          output_names=["output"], do_constant_folding=True)
    return write


def calibrate_bn(model, inp):
    """Batch norm statistics measured on random inputs, as training would
    leave them: with torchvision's defaults (mean 0, variance 1) the
    activations of a deep random network shrink to nothing (EfficientNet's
    logits were 1e-14), and a comparison of such outputs says nothing."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None           # a cumulative average over the batches
    model.train()
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for _ in range(4):
            x = inp()
            model(*[torch.rand(t.shape, generator=g) * 2 - 1 if t.is_floating_point() else t
                    for t in x])
    model.eval()


def make_fp32(name, out):
    ctor, inp, names = FP32[name][:3]
    opset = FP32[name][3] if len(FP32[name]) > 3 else 13
    torch.manual_seed(0)
    model = ctor().eval()
    # weights a constructor leaves at zero (ViT's head and class token) made
    # random too, so that every output depends on every layer
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                torch.nn.init.normal_(p, std=0.05)
    calibrate_bn(model, inp)
    inputs = inp()
    save_case(os.path.join(out, name), export(model, inputs, names, opset), inputs, names)


# qnnpack's default qconfig but for activations in [0, 127] (reduce_range),
# as torch's fbgemm one has them: onnxruntime's uint8 x int8 kernels on x86
# without VNNI add two products in 16 bits and saturate past 32767, so with
# full-range activations its expected outputs would depend on the host
# that made them (ResNet-50 28 output steps off on an AVX2 host).
def TORCH_INT8_QCONFIG():
    q = torch.ao.quantization
    return q.QConfig(activation=q.HistogramObserver.with_args(reduce_range=True),
                     weight=q.MinMaxObserver.with_args(dtype=torch.qint8,
                                                       qscheme=torch.per_tensor_symmetric))


# A network of torch's made with another recipe than this is made again.
TORCH_INT8_RECIPE = "qnnpack, activations reduce_range\n"


def make_torch_int8(name, out):
    torch.manual_seed(0)
    torch.backends.quantized.engine = "qnnpack"
    model = TORCH_INT8[name]().eval()
    calibrate_bn(model, image)
    model.fuse_model()
    model.qconfig = TORCH_INT8_QCONFIG()
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        for s in range(4):         # calibration on random images
            torch.manual_seed(100 + s)
            model(image()[0])
    torch.ao.quantization.convert(model, inplace=True)
    inputs = image()
    save_case(os.path.join(out, name), export(model, inputs, ["input"]), inputs, ["input"])
    with open(os.path.join(out, name, "recipe"), "w") as f:
        f.write(TORCH_INT8_RECIPE)


def made(folder, name):
    """Whether @folder holds network @name as this script makes it now."""
    if not os.path.exists(os.path.join(folder, "test_data_set_0", "input_0.pb")):
        return False
    if name in FP32:
        return True
    try:
        with open(os.path.join(folder, "recipe")) as f:
            return f.read() == TORCH_INT8_RECIPE
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get(
        "NPU_CACHE", os.path.expanduser("~/.cache/npu")), "models"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [n for n in args.only.split(",") if n]
    failed = False
    for name in list(FP32) + list(TORCH_INT8):
        if only and name not in only:
            continue
        if made(os.path.join(args.out, name), name):
            continue
        print("gen.py: %s" % name, file=sys.stderr)
        shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)  # and its outputs
        try:
            (make_fp32 if name in FP32 else make_torch_int8)(name, args.out)
        except Exception as e:      # the others are still made; this one is said
            shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
            print("gen.py: %s: %s" % (name, str(e).splitlines()[0]), file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
