#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""fashion.py - npu-fashion's MLP and CNN in Python: train on Fashion-MNIST
in fp32 (forward, backward and Adam in one run per batch, on the NPU where
there is one), calibrate, quantize to int8, and test both.

    PYTHONPATH=build/python examples/fashion.py [--model mlp|cnn|both]
        [--epochs N] [--train N] [--full] [--data DIR]

The same networks, initial weights, shuffle and learning-rate schedule as
the C demo (examples/fashion), so both print the same accuracies."""

import argparse
import gzip
import math
import sys
import time

import numpy as np

import npu

PIXEL_MEAN, PIXEL_STD = np.float32(0.2860), np.float32(0.3530)
BATCH = 64
A, C, M64 = 6364136223846793005, 1442695040888963407, (1 << 64) - 1


def load_idx(images, labels):
    """An IDX image file and its labels (gzip), as uint8 arrays."""
    with gzip.open(images) as f:
        raw = f.read()
    magic, n, rows, cols = np.frombuffer(raw[:16], ">u4")
    if magic != 0x803 or len(raw) != 16 + n * rows * cols:
        sys.exit("fashion.py: %s is not an IDX image file" % images)
    x = np.frombuffer(raw[16:], np.uint8).reshape(n, rows * cols)
    with gzip.open(labels) as f:
        raw = f.read()
    if np.frombuffer(raw[:8], ">u4")[1] != n or len(raw) != 8 + n:
        sys.exit("fashion.py: %s does not label %s" % (labels, images))
    return x, np.frombuffer(raw[8:], np.uint8).astype(np.int32)


class Rng:
    """The C demo's generator (models.c), for the same initial weights."""

    def __init__(self, seed):
        self.s = seed

    def next(self):
        self.s = (self.s * A + C) & M64
        return self.s >> 11

    def gauss(self):
        u = (self.next() + 0.5) / 9007199254740992.0
        v = (self.next() + 0.5) / 9007199254740992.0
        return math.sqrt(-2.0 * math.log(u)) * math.cos(6.283185307179586 * v)

    def he(self, shape, fan_in):
        gain = math.sqrt(2.0)
        n = int(np.prod(shape))
        return np.array([self.gauss() * gain / math.sqrt(fan_in) for _ in range(n)],
                        np.float32).reshape(shape)


def build(kind, seed):
    """The network, its loss, backward graph and Adam: (graph, plan, x, labels,
    logits, loss, parameter count)."""
    g, rng = npu.Graph(), Rng(seed)
    params = 0

    def param(shape, fan_in):
        nonlocal params
        params += int(np.prod(shape))
        return g.param(rng.he(shape, fan_in) if fan_in else np.zeros(shape, np.float32))

    def dense(h, k, n, relu):
        w = param((n, k), k)
        return g.dense(h, w, param((n,), 0), relu=relu)

    def conv_pool(h, ic, oc):
        w = param((oc, 3, 3, ic), 9 * ic)
        return g.max_pool(g.conv2d(h, w, param((oc,), 0), pad=1, relu=True), 2)

    x = g.activation((BATCH, 784) if kind == "mlp" else (BATCH, 28, 28, 1))
    labels = g.activation((BATCH,), "int32")
    if kind == "mlp":
        logits = dense(dense(dense(x, 784, 256, True), 256, 128, True), 128, 10, False)
    else:
        h = conv_pool(conv_pool(x, 1, 16), 16, 32)
        h = g.reshape(h, (BATCH, 7 * 7 * 32))
        logits = dense(dense(h, 7 * 7 * 32, 128, True), 128, 10, False)
    loss = g.cross_entropy(logits, labels)
    g.backward(loss)
    g.optimizer("adam", lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    return g, g.compile(), x, labels, logits, loss, params


def batch_of(images, labels, order, first, count, lut, shape):
    """Images order[first:first + BATCH], the last repeated past count."""
    idx = np.minimum(np.arange(first, first + BATCH), count - 1)
    idx = order[idx] if order is not None else idx
    return lut[images[idx]].reshape(shape), labels[idx]


def evaluate(run, images, labels, lut, shape):
    """Accuracy of run(x) -> logits over a whole set (partial last batch padded)."""
    right = 0
    for first in range(0, len(images), BATCH):
        x, y = batch_of(images, labels, None, first, len(images), lut, shape)
        z = run(x)
        n = min(BATCH, len(images) - first)
        right += int((z[:n].argmax(axis=1) == y[:n]).sum())
    return right / len(images)


def train(kind, epochs, n_train, data, seed):
    train_x, train_y = data["train"]
    test_x, test_y = data["test"]
    lut = ((np.arange(256, dtype=np.float32) / np.float32(255.0) - PIXEL_MEAN)
           / PIXEL_STD).astype(np.float32)
    g, plan, x, labels, logits, loss, params = build(kind, seed)
    shape = plan.graph.shape(x)
    n = min(n_train, len(train_x))
    batches = n // BATCH
    print("\n%s: %d parameters; %d epoch%s of %d training images (%d batches of %d);\n"
          "Adam (lr 0.001, cosine decay); placement:\n%s"
          % (kind.upper(), params, epochs, "" if epochs == 1 else "s", batches * BATCH,
             batches, BATCH, plan.report))
    order = np.arange(len(train_x), dtype=np.int64)
    s = 42
    t0 = time.monotonic()
    acc = 0.0
    for e in range(epochs):
        for i in range(len(order) - 1, 0, -1):  # the C demo's shuffle
            s = (s * A + C) & M64
            j = (s >> 33) % (i + 1)
            order[i], order[j] = order[j], order[i]
        lsum = right = 0
        for b in range(batches):
            t = (e * batches + b) / (epochs * batches)
            plan.set_lr(1e-3 * 0.5 * (1 + math.cos(math.pi * t)))
            xb, yb = batch_of(train_x, train_y, order, b * BATCH, n, lut, shape)
            lv, z = plan.train({x: xb, labels: yb}, fetch=[loss, logits])
            lsum += float(lv.sum())
            right += int((z.argmax(axis=1) == yb).sum())
            if (b + 1) % max(batches // 10, 1) == 0 or b + 1 == batches:
                seen = (b + 1) * BATCH
                print("\r  %s epoch %d/%d %3d%%  loss %.4f  accuracy %5.1f%%"
                      % (kind.upper(), e + 1, epochs, 100 * (b + 1) // batches,
                         lsum / seen, 100.0 * right / seen), end="", flush=True)
        acc = evaluate(lambda xb: plan.forward({x: xb}, fetch=[logits])[0],
                       test_x, test_y, lut, shape)
        print("\n  test accuracy after epoch %d: %.2f%%" % (e + 1, acc * 100))
    train_s = time.monotonic() - t0

    # Calibrate on 16 training batches, quantize, run int8 on the test set.
    for b in range(16):
        xb, _ = batch_of(train_x, train_y, order, b * BATCH, len(train_x), lut, shape)
        plan.forward({x: xb})
        plan.observe()
    q, qin, qout = plan.quantize(x, logits)
    qplan = q.compile()
    print("  int8 placement:\n%s" % qplan.report)
    t1 = time.monotonic()
    int8_acc = evaluate(lambda xb: qplan.run(qin, xb, qout), test_x, test_y, lut, shape)
    int8_ips = len(test_x) / (time.monotonic() - t1)

    # The int8 graph as placed against libnpu's CPU reference, bit for bit.
    qc, cin, cout = plan.quantize(x, logits)
    cplan = qc.compile("cpu")
    same = 0
    for first in range(0, 256, BATCH):
        xb, _ = batch_of(test_x, test_y, None, first, len(test_x), lut, shape)
        same += int((qplan.run(qin, xb, qout) == cplan.run(cin, xb, cout)).all(axis=1).sum())
    print("  int8: test accuracy %.2f%%; as placed = CPU reference on %d/256 images"
          % (int8_acc * 100, same))
    return dict(model=kind.upper(), params=params, epochs=epochs, fp32=acc, int8=int8_acc,
                train_s=train_s, ips=batches * BATCH * epochs / train_s, int8_ips=int8_ips,
                same=same)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    ap.add_argument("--epochs", type=int, default=0, help="default: 3 (MLP), 2 (CNN)")
    ap.add_argument("--train", type=int, default=0, help="training images (12000; --full 60000)")
    ap.add_argument("--full", action="store_true", help="all 60,000 images, more epochs")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    if a.epochs < 0 or a.train < 0:
        ap.error("--epochs and --train take positive numbers")
    data = {k: load_idx("%s/%s-images-idx3-ubyte.gz" % (a.data, f),
                        "%s/%s-labels-idx1-ubyte.gz" % (a.data, f))
            for k, f in (("train", "train"), ("test", "t10k"))}
    n_train = a.train or (60000 if a.full else 12000)
    print("Fashion-MNIST: %d training and %d test images; %s; libnpu %s"
          % (len(data["train"][0]), len(data["test"][0]),
             "with the NPU" if npu.get_device() == "NPU" else "no NPU", npu.version()))
    results = []
    for k, kind in enumerate(("mlp", "cnn")):
        if a.model in (kind, "both"):
            epochs = a.epochs or ((15, 8) if a.full else (3, 2))[k]
            results.append(train(kind, epochs, n_train, data, 1234 + k))
    print("\n%-6s %7s %3s  %7s %7s  %7s %6s %7s" % ("model", "params", "ep", "fp32", "int8",
                                                    "train s", "img/s", "int8/s"))
    for r in results:
        print("%-6s %7d %3d  %6.2f%% %6.2f%%  %7.1f %6.0f %7.0f"
              % (r["model"], r["params"], r["epochs"], r["fp32"] * 100, r["int8"] * 100,
                 r["train_s"], r["ips"], r["int8_ips"]))
    return 0 if all(r["same"] == 256 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
