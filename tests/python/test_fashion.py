# SPDX-License-Identifier: MIT
"""examples/fashion.py against the C demo it mirrors (build/examples/
npu-fashion): the same network, weights, shuffle and schedule, so the same
fp32 and int8 test accuracies, to the last digit printed; and its int8
graph as placed equal to libnpu's CPU reference. A short setting (one
epoch of 1,024 images: 30 s on the emulated guest's NPU)."""
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("NPU_FASHION_DATA", "/usr/share/datasets/fashion-mnist")
DEMO = os.path.join(REPO, "build", "examples", "npu-fashion")
ARGS = ["--model", "mlp", "--epochs", "1", "--train", "1024", "--data", DATA]


def accuracies(out):
    return (re.findall(r"test accuracy after epoch \d+: ([\d.]+)%", out),
            re.findall(r"int8: test accuracy ([\d.]+)%", out))


def test_fashion_py_matches_the_c_demo(tmp_path):
    if not os.path.exists(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")):
        pytest.skip("no Fashion-MNIST in %s" % DATA)
    if not os.path.exists(DEMO):
        pytest.skip("no %s (make examples)" % DEMO)
    c = subprocess.run([DEMO] + ARGS + ["--plot", str(tmp_path / "c.png")],
                       capture_output=True, text=True, timeout=1200)
    assert c.returncode == 0, c.stderr
    py = subprocess.run([sys.executable, os.path.join(REPO, "examples", "fashion.py")] + ARGS,
                        capture_output=True, text=True, timeout=1200)
    assert py.returncode == 0, py.stderr + py.stdout[-2000:]
    assert "as placed = CPU reference on 256/256 images" in py.stdout
    fp32, int8 = accuracies(py.stdout)
    assert len(fp32) == 1 and len(int8) == 1 and float(fp32[0]) > 50.0
    assert (fp32, int8) == accuracies(c.stdout)
