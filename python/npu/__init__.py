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
          7: "tensor(bfloat16)"}


from . import ops  # noqa: E402 (one-call ops: npu.ops.gemm_i8, npu.ops.matmul, ...)
from .graph import Graph, Plan  # noqa: E402
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
        del provider_options, kwargs  # no provider options are needed
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
        backend, self._providers = self._choose(providers)
        try:
            self._model = _npu.Model(model, backend, self._options.strict)
        except _npu.Error as e:
            raise _wrap(e) from None
        self._inputs = [NodeArg(*io) for io in self._model.inputs]
        self._outputs = [NodeArg(*io) for io in self._model.outputs]

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

    def placement_report(self):
        """Where each op runs, and why: libnpu's placement report."""
        return self._model.report

    def placement(self):
        """Where each op runs: [{"op", "type", "name", "backend"}]."""
        return self._model.placement

    def modeled_cycles(self):
        """The modeled NPU cycles of the last run (0 without the NPU)."""
        return self._model.cycles

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
        try:
            results = self._model.run(arrays)
        except _npu.Error as e:
            raise _wrap(e) from None
        except (TypeError, ValueError) as e:
            raise InvalidArgument(str(e), _NPU_EINVAL) from None
        by_name = dict(zip(outs, results))
        return [by_name[n] for n in want]
