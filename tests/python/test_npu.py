# SPDX-License-Identifier: MIT
"""The npu Python package, with pytest: onnxruntime's session API over
libnpu, checked against onnxruntime's own outputs (the zoo's test data,
written by ort-run.js: an independent runtime), its errors, its memory
over many runs, and runs from several threads at once.

Environment: NPU_ZOO (the zoo's folder), NPU_PY_PROVIDERS (the providers
to run the zoo on, comma-separated; default: every one this machine has),
NPU_PY_ZOO (the networks, comma-separated).
"""
import gc
import os
import resource
import sys
import threading
import tracemalloc

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import npu as ort

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import check  # noqa: E402  (the zoo's comparison: tolerances and top-1)

ZOO = os.environ.get("NPU_ZOO", os.path.expanduser("~/.cache/npu/models"))
NETS = os.environ.get("NPU_PY_ZOO", "squeezenet,squeezenet_int8_qdq,mobilenet_v3_small").split(",")
PROVIDERS = [p for p in os.environ.get("NPU_PY_PROVIDERS", "").split(",") if p] or \
    ort.get_available_providers()


def tiny_model(dtype=TensorProto.FLOAT, shape=(2, 3), relu=True):
    """y = relu(a + b) (or a + b), an ONNX model made here (opset 13)."""
    a = helper.make_tensor_value_info("a", dtype, list(shape))
    b = helper.make_tensor_value_info("b", dtype, list(shape))
    y = helper.make_tensor_value_info("y", dtype, list(shape))
    nodes = [helper.make_node("Add", ["a", "b"], ["s" if relu else "y"])]
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["y"]))
    g = helper.make_graph(nodes, "tiny", [a, b], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def zoo_case(name):
    case = os.path.join(ZOO, name)
    if not os.path.exists(os.path.join(case, "test_data_set_0", "output_0.pb")):
        pytest.skip("%s: not in the zoo (%s); make check-models makes it" % (name, ZOO))
    return case


def feed_of(sess, case):
    data = os.path.join(case, "test_data_set_0")
    files = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    return {i.name: numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f)))
            for i, f in zip(sess.get_inputs(), files)}


# ---- the module ----------------------------------------------------------

def test_module_level_functions():
    assert ort.get_version_string() == ort.__version__ == ort.version()
    assert ort.get_available_providers()[-1] == "CPUExecutionProvider"
    assert set(ort.get_available_providers()) <= set(ort.get_all_providers())
    assert ort.get_device() in ("NPU", "CPU")
    devs = ort.devices()
    assert (ort.get_device() == "NPU") == bool(devs)
    assert ("NPUExecutionProvider" in ort.get_available_providers()) == bool(devs)
    for d in devs:
        assert d["node"].startswith("/dev/accel/")
        assert d["num_rings"] >= 1 and len(d["fw_version"]) == 3
        assert d["profile"] in ("full", "edge") and 16 in d["commands"]  # NPU_CMD_GEMM_I8
        assert (25 in d["commands"]) == (d["profile"] == "full")      # NPU_CMD_GEMM_F32


# ---- a session's API, as onnxruntime's ---------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
def test_tiny_model_from_bytes(provider):
    sess = ort.InferenceSession(tiny_model(), providers=[provider])
    assert sess.get_providers() == [provider]
    (a, b), (y,) = sess.get_inputs(), sess.get_outputs()
    assert (a.name, a.type, a.shape) == ("a", "tensor(float)", [2, 3])
    assert (b.name, y.name, y.type, y.shape) == ("b", "y", "tensor(float)", [2, 3])
    x1 = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    x2 = np.array([[0.5, 1, -4], [4, 0.25, 7]], np.float32)
    (got,) = sess.run(None, {"a": x1, "b": x2})
    assert got.dtype == np.float32 and got.shape == (2, 3)
    np.testing.assert_array_equal(got, [[1.5, 0, 0], [0, 5.25, 1]])   # by hand
    assert sess.run(["y"], {"a": x1, "b": x2})[0].tolist() == got.tolist()


def test_session_from_a_path_and_options(tmp_path):
    path = tmp_path / "tiny.onnx"
    path.write_bytes(tiny_model())
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = 2
    opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    assert opts.get_session_config_entry("session.disable_cpu_ep_fallback") == "1"
    sess = ort.InferenceSession(str(path), sess_options=opts,
                                providers=["CPUExecutionProvider"])
    assert sess.get_session_options() is opts
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert "add" in sess.placement_report()
    assert [p["backend"] for p in sess.placement()]
    x = np.ones((2, 3), np.float32)
    (y,) = sess.run(None, {"a": x, "b": x}, ort.RunOptions())
    np.testing.assert_array_equal(y, 2 * x)


def test_more_of_onnxruntime_s_surface():
    ort.set_default_logger_severity(3)
    ort.set_seed(1)
    ort.disable_telemetry_events()
    assert ort.__version__ in ort.get_build_info()
    sess = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
    sess.set_providers(["CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    sess.disable_fallback()
    assert sess.get_session_options().strict
    sess.enable_fallback()
    assert sess.end_profiling() == "" and sess.get_profiling_start_time_ns() == 0
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(sess.run(None, {"a": x, "b": -2 * x})[0], 0 * x)


def test_default_providers_and_tuples():
    sess = ort.InferenceSession(tiny_model())
    assert sess.get_providers() == ort.get_available_providers()
    sess = ort.InferenceSession(tiny_model(), providers=[("CPUExecutionProvider", {})])
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_integer_models():
    sess = ort.InferenceSession(tiny_model(TensorProto.INT64, (4,), relu=False),
                                providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].type == "tensor(int64)"
    (y,) = sess.run(None, {"a": np.array([1, -5, 7, 0], np.int64),
                           "b": np.array([2, 3, -9, 1 << 40], np.int64)})
    assert y.dtype == np.int64 and y.tolist() == [3, -2, -2, 1 << 40]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_float16_models(provider):
    """A float16 model as onnxruntime's users feed it: float16 in and out,
    computed in fp32 between; the result as numpy rounds fp32 into float16
    (hand-picked values: ties, a subnormal, past the largest finite)."""
    sess = ort.InferenceSession(tiny_model(TensorProto.FLOAT16, (6,)), providers=[provider])
    assert sess.get_inputs()[0].type == "tensor(float16)"
    assert sess.get_outputs()[0].type == "tensor(float16)"
    a = np.array([1.0, 2048.0, 6e-8, 60000.0, -3.0, 0.1], np.float16)
    b = np.array([2.0 ** -11, 1.0, 6e-8, 6000.0, 1.0, 0.2], np.float16)
    (y,) = sess.run(None, {"a": a, "b": b})
    with np.errstate(over="ignore"):
        want = np.maximum(a.astype(np.float32) + b.astype(np.float32), 0).astype(np.float16)
    assert y.dtype == np.float16
    assert y.tobytes() == want.tobytes()
    # 1 + 2^-11 is a tie (to 1), 2048 + 1 too (to 2048); 66000 is infinity
    assert y[0] == 1.0 and y[1] == 2048.0 and np.isinf(y[3])


def test_external_data_and_hostile_locations(tmp_path):
    """Weights in a file beside the model (external data) load from the
    model's folder; a location that is absolute, climbs out with "..",
    is a link out of the folder, or whose offset or length do not fit the
    file or the shape, is refused with a message naming it."""
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Add", ["a", "w"], ["y"])], "ext", [a], [y],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    good = tmp_path / "good"
    good.mkdir()
    onnx.save_model(m, str(good / "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
    sess = ort.InferenceSession(str(good / "model.onnx"), providers=["CPUExecutionProvider"])
    (out,) = sess.run(None, {"a": np.ones((2, 3), np.float32)})
    assert out.tolist() == (w + 1).tolist()
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"\0" * 24)
    cases = {"abs": {"location": str(secret)}, "up": {"location": "../secret.bin"},
             "link": {"location": "link.bin"}, "offset": {"offset": "16"},
             "length": {"length": "8"}, "number": {"offset": "1e3"},
             "key": {"colour": "red"}}
    for name, change in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "w.bin").write_bytes((good / "w.bin").read_bytes())
        if name == "link":
            os.symlink(str(secret), str(d / "link.bin"))
        mm = onnx.load(str(good / "model.onnx"), load_external_data=False)
        t = mm.graph.initializer[0]
        for k, v in change.items():
            for e in t.external_data:
                if e.key == k:
                    e.value = v
                    break
            else:
                t.external_data.add(key=k, value=v)
        onnx.save(mm, str(d / "model.onnx"))
        with pytest.raises(Exception) as e:
            ort.InferenceSession(str(d / "model.onnx"), providers=["CPUExecutionProvider"])
        assert "external data" in str(e.value), name
    # from bytes there is no folder: refused, not read from the working directory
    with pytest.raises(Exception) as e:
        ort.InferenceSession((good / "model.onnx").read_bytes(),
                             providers=["CPUExecutionProvider"])
    assert "no folder" in str(e.value)


def test_non_contiguous_inputs_are_read_right():
    sess = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
    big = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = big[::2, ::2]                    # a strided view
    b = np.asfortranarray(np.ones((2, 3), np.float32))
    (y,) = sess.run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(y, a + 1)


def reshape_model():
    """y = Reshape(x, shape), the shape an input: its value is needed to load."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    s = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "r", [x, s],
                          [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_model_needing_input_values_loads_at_its_runs(provider):
    sess = ort.InferenceSession(reshape_model(), providers=[provider])
    assert [(i.name, i.type, i.shape) for i in sess.get_inputs()] == \
        [("x", "tensor(float)", [2, 6]), ("shape", "tensor(int64)", [2])]
    assert "first run" in sess.placement_report()
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    (y,) = sess.run(None, {"x": x, "shape": np.array([3, 4], np.int64)})
    np.testing.assert_array_equal(y, x.reshape(3, 4))
    (y,) = sess.run(None, {"x": x + 1, "shape": np.array([3, 4], np.int64)})
    np.testing.assert_array_equal(y, (x + 1).reshape(3, 4))
    (y,) = sess.run(["y"], {"x": x, "shape": np.array([-1, 2], np.int64)})
    np.testing.assert_array_equal(y, x.reshape(6, 2))
    assert "reshape" in sess.placement_report()
    with pytest.raises(ort.NPUError):
        sess.run(None, {"x": x, "shape": np.array([5, 5], np.int64)})


def test_ortvalue_and_io_binding():
    sess = ort.InferenceSession(tiny_model(relu=False), providers=["CPUExecutionProvider"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = ort.OrtValue.ortvalue_from_numpy(x)
    assert v.shape() == [2, 3] and v.data_type() == "tensor(float)"
    assert v.device_name() == "cpu" and v.is_tensor() and v.numpy() is not None
    (y,) = sess.run_with_ort_values(["y"], {"a": v, "b": v})
    np.testing.assert_array_equal(y.numpy(), 2 * x)
    io = sess.io_binding()
    io.bind_cpu_input("a", x)
    io.bind_ortvalue_input("b", ort.OrtValue.ortvalue_from_numpy(np.ones_like(x)))
    out = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    io.bind_ortvalue_output("y", out)
    sess.run_with_iobinding(io)
    np.testing.assert_array_equal(out.numpy(), x + 1)
    np.testing.assert_array_equal(io.copy_outputs_to_cpu()[0], x + 1)
    buf = np.zeros((2, 3), np.float32)  # memory bound by address, as with a GPU buffer
    io.clear_binding_outputs()
    io.bind_output("y", "cpu", 0, np.float32, [2, 3], buf.ctypes.data)
    sess.run_with_iobinding(io)
    np.testing.assert_array_equal(buf, x + 1)
    io.clear_binding_outputs()
    io.bind_output("y")
    io.bind_input("a", "cpu", 0, np.float32, [2, 3], buf.ctypes.data)
    sess.run_with_iobinding(io)
    np.testing.assert_array_equal(io.get_outputs()[0].numpy(), x + 2)
    with pytest.raises(ort.InvalidArgument):
        io.bind_output("y", "cuda")
    with pytest.raises(ort.InvalidArgument):
        out.update_inplace(np.zeros(3, np.float32))
    out.update_inplace(np.zeros((2, 3), np.float32))
    assert not out.numpy().any()


# ---- the zoo, against onnxruntime's outputs --------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("net", NETS)
def test_zoo_matches_onnxruntime(net, provider):
    case = zoo_case(net)
    sess = ort.InferenceSession(os.path.join(case, "model.onnx"), providers=[provider])
    model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    # get_inputs()/get_outputs(): the model's names, shapes and types
    assert [i.name for i in sess.get_inputs()] == [
        i.name for i in model.graph.input
        if i.name not in {t.name for t in model.graph.initializer}]
    assert [o.name for o in sess.get_outputs()] == [o.name for o in model.graph.output]
    for o, m in zip(sess.get_outputs(), model.graph.output):
        dims = m.type.tensor_type.shape.dim     # a symbolic one: what it came to
        assert len(o.shape) == len(dims)
        assert all(d.dim_value in (0, s) for d, s in zip(dims, o.shape)), (o.shape, dims)
    # the provider asked for is where ops run
    ran = {p["backend"] for p in sess.placement()}
    assert ran & {"NPUExecutionProvider": {"npu"}, "OpenCLExecutionProvider": {"opencl"},
                  "CPUExecutionProvider": {"onednn", "cpu"}}[provider], ran
    got = sess.run(None, feed_of(sess, case))
    step = check.output_step(model)
    worst, top1, why = check.compare(got, case, step)
    if step and not (why is None and top1 and worst <= 2.0 + 1e-3):
        # int8: onnxruntime's unfused run, as ONNX defines the ops
        worst, top1, why = check.compare(got, case, step, ".basic")
    assert why is None, why
    assert top1, "top-1 differs from onnxruntime's"
    assert worst <= (2.0 + 1e-3 if step else 1e-3), \
        "%s from onnxruntime's outputs" % ("%.1f steps" % worst if step else "%.2e" % worst)


# ---- errors: each a clear exception --------------------------------------

def test_errors():
    with pytest.raises(ort.NoSuchFile, match="doesn't exist"):
        ort.InferenceSession("/nonexistent/model.onnx")
    with pytest.raises(FileNotFoundError):
        ort.InferenceSession("/nonexistent/model.onnx")
    with pytest.raises(ort.NPUError, match="cannot load the model"):
        ort.InferenceSession(b"this is not an onnx model")
    with pytest.raises(TypeError):
        ort.InferenceSession(42)
    with pytest.raises(ort.InvalidArgument, match="Unknown Provider Type"):
        ort.InferenceSession(tiny_model(), providers=["TensorrtExecutionProvider"])
    sess = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ort.InvalidArgument, match="Invalid input name: c"):
        sess.run(None, {"a": x, "b": x, "c": x})
    with pytest.raises(ort.InvalidArgument, match="Missing Input: b"):
        sess.run(None, {"a": x})
    with pytest.raises(ort.InvalidArgument, match="dtype float64 given, float32 wanted"):
        sess.run(None, {"a": x.astype(np.float64), "b": x})
    with pytest.raises(ort.InvalidArgument, match="rank 1 given, 2 wanted"):
        sess.run(None, {"a": x.ravel(), "b": x})
    with pytest.raises(ort.InvalidArgument, match="dimension 1 is 4, 3 wanted"):
        sess.run(None, {"a": np.ones((2, 4), np.float32), "b": x})
    with pytest.raises(ort.InvalidArgument, match="Invalid output name: z"):
        sess.run(["z"], {"a": x, "b": x})
    with pytest.raises(ValueError):          # InvalidArgument is one too
        sess.run(None, {"a": "text", "b": x})
    with pytest.raises(ort.InvalidArgument):
        sess.run(None, [x, x])
    # unimplemented: an op libnpu does not import
    g = helper.make_graph([helper.make_node("Det", ["a"], ["y"])], "det",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    det = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ort.NotImplemented, match="Det"):
        ort.InferenceSession(det.SerializeToString())


# ---- memory over many runs, and threads -----------------------------------

def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (resource.getpagesize() // 1024)


def test_no_leak_over_10000_runs():
    sess = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
    x = np.ones((2, 3), np.float32)
    feed = {"a": x, "b": x}
    for _ in range(500):                    # warm: caches, arenas
        sess.run(None, feed)
    gc.collect()
    tracemalloc.start()
    before_py = tracemalloc.get_traced_memory()[0]
    before_rss = rss_kib()
    for _ in range(10000):
        sess.run(None, feed)
    gc.collect()
    grown_py = tracemalloc.get_traced_memory()[0] - before_py
    tracemalloc.stop()
    grown_rss = rss_kib() - before_rss
    # A leak of one output array (24 bytes of data, ~100 of object) per run
    # is a megabyte here; of a reference to an input, as much in objects.
    assert grown_py < 64 * 1024, "Python heap grew %d bytes over 10,000 runs" % grown_py
    # ASan's quarantine keeps freed memory: there only the heap counts.
    if "libasan" not in os.environ.get("LD_PRELOAD", ""):
        assert grown_rss < 2048, "RSS grew %d KiB over 10,000 runs" % grown_rss


def test_sessions_and_runs_from_several_threads():
    shared = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
    errors = []

    def worker(k):
        try:
            own = ort.InferenceSession(tiny_model(), providers=["CPUExecutionProvider"])
            for i in range(200):
                x = np.full((2, 3), k + i, np.float32)
                for s in (shared, own):
                    (y,) = s.run(None, {"a": x, "b": x})
                    if not (y == 2 * (k + i)).all():
                        errors.append("thread %d run %d: %s" % (k, i, y))
        except Exception as e:          # noqa: BLE001 (reported below)
            errors.append("thread %d: %r" % (k, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_command_line(tmp_path, capsys):
    from npu.__main__ import main

    path = tmp_path / "tiny.onnx"
    path.write_bytes(tiny_model())
    np.save(tmp_path / "a.npy", np.full((2, 3), 2, np.float32))
    np.save(tmp_path / "b.npy", np.full((2, 3), -3, np.float32))
    assert main(["run", str(path), "--backend", "cpu", "--input", "a=%s" % (tmp_path / "a.npy"),
                 "--input", "b=%s" % (tmp_path / "b.npy"), "--report",
                 "--output-dir", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "y [2, 3] float32" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.zeros((2, 3)))
    assert main(["devices"]) == 0
    assert main(["run", str(tmp_path / "missing.onnx")]) == 1
    # A model whose shape is an input: loaded with the value given.
    path = tmp_path / "reshape.onnx"
    path.write_bytes(reshape_model())
    np.save(tmp_path / "x.npy", np.arange(12, dtype=np.float32).reshape(2, 6))
    np.save(tmp_path / "s.npy", np.array([4, 3], np.int64))
    capsys.readouterr()
    assert main(["run", str(path), "--input", "x=%s" % (tmp_path / "x.npy"),
                 "--input", "shape=%s" % (tmp_path / "s.npy"), "--iterations", "3"]) == 0
    out = capsys.readouterr().out
    assert "y [4, 3] float32 [0. 1. 2. 3. 4. 5.] ..." in out and "3 runs" in out
    assert os.environ.get("NPU_BACKEND") is None  # --backend cpu left nothing behind
