# SPDX-License-Identifier: MIT
"""npu: run ONNX models through libnpu, on the NPU, OpenCL or the CPU.

Spelled as onnxruntime's Python API, so that a script written for it runs
here by changing its import line to ``import npu as ort``::

    import npu as ort
    sess = ort.InferenceSession("model.onnx",
                                providers=["NPUExecutionProvider",
                                           "CPUExecutionProvider"])
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})

Everything is computed by libnpu (its C API, through the ``_npu``
extension); this file only gives it onnxruntime's shape.
Documentation/python.rst.
"""

import os

from . import _npu

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "NodeArg",
    "GraphOptimizationLevel", "ExecutionMode", "NPUError", "Fail",
    "InvalidArgument", "NoSuchFile", "InvalidGraph", "NotImplemented",
    "get_available_providers", "get_all_providers", "get_device",
    "get_version_string", "devices", "version", "__version__", "Graph", "Plan", "ops",
    "OrtValue", "IOBinding", "get_build_info", "set_default_logger_severity",
    "set_default_logger_verbosity", "set_seed", "disable_telemetry_events",
    "enable_telemetry_events",
]

__version__ = _npu.version()

# onnxruntime's provider names, and the libnpu backend (enum npu_backend)
# each one starts placement from.
_BACKENDS = {
    "NPUExecutionProvider": 1,
    "OpenCLExecutionProvider": 2,
    "CPUExecutionProvider": 6,     # oneDNN where installed; libnpu falls back
}
_AUTO = 0

# enum npu_dtype -> onnxruntime's type strings.
_TYPES = {1: "tensor(int8)", 2: "tensor(int32)", 3: "tensor(float)",
          4: "tensor(uint8)", 5: "tensor(int64)", 6: "tensor(bool)",
          7: "tensor(bfloat16)", 8: "tensor(float16)"}


from . import ops  # noqa: E402 (one-call ops: npu.ops.gemm_i8, npu.ops.matmul, ...)
from .graph import Graph, Plan  # noqa: E402
from .ortvalue import IOBinding, OrtValue  # noqa: E402
from .errors import (NPUError, Fail, InvalidArgument, NoSuchFile, InvalidGraph,  # noqa: E402
                     NotImplemented, _NPU_EINVAL, _wrap)


def version():
    """libnpu's version, "major.minor.patch"."""
    return _npu.version()


def get_version_string():
    return __version__


def devices():
    """The NPUs there are, each a dict of its properties (npu_device_info)."""
    return [_npu.device_info(i) for i in range(_npu.device_count())]


_opencl = []


def _opencl_available():
    # libnpu's own answer (its OpenCL backend opened once), kept.
    if not _opencl:
        _opencl.append(_npu.opencl_device())
    return _opencl[0] is not None


def get_all_providers():
    return list(_BACKENDS)


def get_available_providers():
    """The providers this machine has, best first (CPU always)."""
    found = []
    if _npu.device_count() > 0:
        found.append("NPUExecutionProvider")
    if _opencl_available():
        found.append("OpenCLExecutionProvider")
    found.append("CPUExecutionProvider")
    return found


def get_device():
    """"NPU" where there is one, else "CPU" (onnxruntime: "CPU" or "GPU")."""
    return "NPU" if _npu.device_count() > 0 else "CPU"


def get_build_info():
    return "libnpu %s (the npu package: onnxruntime's API over libnpu)" % __version__


# onnxruntime's process-wide settings: libnpu logs nothing and draws no
# random numbers, so they are accepted and change nothing.
def set_default_logger_severity(level):
    del level


def set_default_logger_verbosity(level):
    del level


def set_seed(seed):
    del seed


def disable_telemetry_events():
    pass


def enable_telemetry_events():
    pass


class GraphOptimizationLevel:
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode:
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """onnxruntime's SessionOptions. What libnpu decides itself (threads,
    graph optimizations) is accepted and kept, not used. Strict placement,
    no fallback from the first provider: ``add_session_config_entry(
    "session.disable_cpu_ep_fallback", "1")``, as with onnxruntime."""

    def __init__(self):
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.enable_profiling = False
        self.optimized_model_filepath = ""
        self.enable_mem_pattern = True
        self.enable_cpu_mem_arena = True
        self._config = {}

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise InvalidArgument("SessionOptions: no config entry '%s'" % key,
                                  _NPU_EINVAL)
        return self._config[key]

    @property
    def strict(self):
        return self._config.get("session.disable_cpu_ep_fallback", "0") == "1"


class RunOptions:
    """onnxruntime's RunOptions: accepted, not used."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False


# What libnpu says of a model whose load needs an input's value.
_NEEDS_VALUES = "must be known when the model is loaded"
# ONNX's TensorProto element types -> enum npu_dtype.
_ONNX_TYPES = {1: 3, 2: 4, 3: 1, 6: 2, 7: 5, 9: 6, 16: 7}


def _onnx_io(model):
    """([inputs], [outputs]) as NodeArgs, read with the onnx package (None
    without it): the graph's inputs that are not initializers."""
    try:
        import onnx
    except ImportError:
        return None
    m = onnx.load_model_from_string(model) if isinstance(model, bytes) else \
        onnx.load(model, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}

    def arg(v):
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                 for d in t.shape.dim]
        return NodeArg(v.name, _ONNX_TYPES.get(t.elem_type, 0), shape)
    return ([arg(v) for v in m.graph.input if v.name not in inits],
            [arg(v) for v in m.graph.output])


def _same(a, b):
    """The same input value: dtype, shape and elements."""
    return a is not None and a.dtype == b.dtype and a.shape == b.shape and \
        bool((a == b).all())


class NodeArg:
    """An input or output: ``name``, ``shape`` (a list of ints) and
    ``type`` ("tensor(float)", ...), as onnxruntime spells them."""

    def __init__(self, name, dtype, shape):
        self.name = name
        self.type = _TYPES.get(dtype, "tensor(unknown)")
        self.shape = list(shape)
        self._dtype = dtype

    def __repr__(self):
        return "NodeArg(name='%s', type='%s', shape=%s)" % (self.name, self.type,
                                                            self.shape)


class InferenceSession:
    """onnxruntime's InferenceSession over a libnpu plan.

    ``providers`` is an ordered preference: the first one this machine has
    is where placement starts, and libnpu falls back from it op by op
    (unless the session options ask for strict placement). Without it,
    libnpu picks (the NPU if there is one, else OpenCL, else the CPU), or
    what $NPU_BACKEND says.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None,
                 provider_options=None, **kwargs):
        del provider_options  # no provider options are needed
        self._options = sess_options or SessionOptions()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            model = bytes(path_or_bytes)
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            model = os.fspath(path_or_bytes)
            if not os.path.exists(model):
                raise NoSuchFile("Load model from %s failed: File doesn't exist" % model)
        else:
            raise TypeError("InferenceSession takes a path or the model's bytes, not %s"
                            % type(path_or_bytes).__name__)
        self._source = path_or_bytes
        backend, self._providers = self._choose(providers)
        if kwargs.get("npu_backend") is not None:  # libnpu's own name: python3 -m npu run
            backend = kwargs["npu_backend"]
        self._load = (model, backend, self._options.strict)
        self._models = []     # (model, {input: the value its load used}), newest last
        self._last = None
        try:
            self._model = _npu.Model(*self._load)
        except _npu.Error as e:
            if _NEEDS_VALUES not in str(e) or not self._defer(model):
                raise _wrap(e) from None
            return
        self._inputs = [NodeArg(*io) for io in self._model.inputs]
        self._outputs = [NodeArg(*io) for io in self._model.outputs]

    def _defer(self, model):
        """A model that needs some inputs' values to load (a shape fed as
        an input): loaded at each run with those values (npu_model_opts'
        fixed values, as npu-run does), once per set of values. Its inputs
        and outputs, until then, as the ONNX file declares them."""
        io = _onnx_io(model)
        if io is None:
            return False
        self._model = None
        self._inputs, self._outputs = io
        return True

    def _model_for(self, feed):
        """The model loaded for ``feed``'s values of the inputs its load
        needed (those it no longer declares as inputs)."""
        for m, used in self._models:
            if all(_same(feed.get(n), v) for n, v in used.items()):
                return m
        fixed = [(n, v) for n, v in feed.items()]
        try:
            m = _npu.Model(*self._load, fixed=fixed)
        except _npu.Error as e:
            raise _wrap(e) from None
        kept = {io[0] for io in m.inputs}
        # An input read at load time and as data stays declared: then
        # every integer input (shapes, indexes) decides.
        names = [n for n in feed if n not in kept] or \
            [n for n in feed if feed[n].dtype.kind in "iub"]
        self._models = self._models[-7:] + [(m, {n: feed[n].copy() for n in names})]
        return m

    @staticmethod
    def _choose(providers):
        if providers is None:
            return _AUTO, get_available_providers()
        names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
        for p in names:
            if p not in _BACKENDS:
                raise InvalidArgument("Unknown Provider Type: %s (this runtime has %s)"
                                      % (p, ", ".join(_BACKENDS)), _NPU_EINVAL)
        available = get_available_providers()
        usable = [p for p in names if p in available]
        if not usable:
            raise InvalidArgument("none of the providers %s is available here (%s)"
                                  % (names, ", ".join(available)), _NPU_EINVAL)
        return _BACKENDS[usable[0]], usable

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {p: {} for p in self._providers}

    def get_session_options(self):
        return self._options

    def get_modelmeta(self):
        return None

    def set_providers(self, providers=None, provider_options=None):
        """Load the model again, placed from ``providers`` (as the constructor)."""
        del provider_options
        self.__init__(self._source, self._options, providers)

    def disable_fallback(self):
        """Strict placement from the next set_providers() on."""
        self._options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")

    def enable_fallback(self):
        self._options.add_session_config_entry("session.disable_cpu_ep_fallback", "0")

    def end_profiling(self):
        """onnxruntime's profile file: none here ("" ); NPU_TRACE writes libnpu's
        timeline (Documentation/observability.rst)."""
        return ""

    def get_profiling_start_time_ns(self):
        return 0

    def _loaded(self):
        """The model as loaded (for a model that needs input values to load:
        as its last run loaded it; None before that)."""
        return self._model if self._model is not None else self._last

    def placement_report(self):
        """Where each op runs, and why: libnpu's placement report."""
        m = self._loaded()
        return m.report if m else "(loaded at the first run: it needs input values)\n"

    def placement(self):
        """Where each op runs: [{"op", "type", "name", "backend"}]."""
        m = self._loaded()
        return m.placement if m else []

    def modeled_cycles(self):
        """The modeled NPU cycles of the last run (0 without the NPU)."""
        m = self._loaded()
        return m.cycles if m else 0

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (all of them for None or []), in that order,
        as numpy arrays, from ``input_feed``: {input name: numpy array}."""
        del run_options
        import numpy as np

        if not isinstance(input_feed, dict):
            raise InvalidArgument("run() takes a dict of inputs, by name", _NPU_EINVAL)
        names = [i.name for i in self._inputs]
        for k in input_feed:
            if k not in names:
                raise InvalidArgument("Invalid input name: %s (the model's inputs: %s)"
                                      % (k, ", ".join(names)), _NPU_EINVAL)
        arrays = []
        for i in self._inputs:
            if i.name not in input_feed:
                raise InvalidArgument("Missing Input: %s" % i.name, _NPU_EINVAL)
            v = input_feed[i.name]
            arrays.append(v if isinstance(v, np.ndarray) else np.asarray(v))
        outs = [o.name for o in self._outputs]
        want = list(output_names) if output_names else outs
        for n in want:
            if n not in outs:
                raise InvalidArgument("Invalid output name: %s (the model's outputs: %s)"
                                      % (n, ", ".join(outs)), _NPU_EINVAL)
        model = self._model
        if model is None:
            model = self._last = self._model_for({i.name: a for i, a in
                                                  zip(self._inputs, arrays)})
            kept = [io[0] for io in model.inputs]
            arrays = [a for i, a in zip(self._inputs, arrays) if i.name in kept]
        try:
            results = model.run(arrays)
        except _npu.Error as e:
            raise _wrap(e) from None
        except (TypeError, ValueError) as e:
            raise InvalidArgument(str(e), _NPU_EINVAL) from None
        by_name = dict(zip(outs, results))
        return [by_name[n] for n in want]

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """run() on OrtValues, giving OrtValues."""
        feed = {k: v.numpy() if isinstance(v, OrtValue) else v
                for k, v in input_dict_ort_values.items()}
        return [OrtValue(r) for r in self.run(output_names, feed, run_options)]

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)
