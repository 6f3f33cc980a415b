# SPDX-License-Identifier: MIT
"""onnxruntime's OrtValue and IOBinding, for scripts written with them.

Every value lives in host memory here (libnpu moves data to the NPU or the
OpenCL device itself), so an OrtValue is a numpy array kept without a copy
and an IOBinding a set of inputs and outputs that a run fills in.
"""
import ctypes

import numpy as np

from .errors import InvalidArgument, _NPU_EINVAL

# numpy's dtypes -> onnxruntime's type strings.
_TYPE_NAMES = {
    "float32": "tensor(float)", "int8": "tensor(int8)", "uint8": "tensor(uint8)",
    "int32": "tensor(int32)", "int64": "tensor(int64)", "bool": "tensor(bool)",
    "float64": "tensor(double)", "float16": "tensor(float16)", "int16": "tensor(int16)",
}


def _cpu(device_type):
    if str(device_type).lower() != "cpu":
        raise InvalidArgument("this runtime keeps values in host memory: device 'cpu', "
                              "not %r" % (device_type,), _NPU_EINVAL)


class OrtValue:
    """A tensor in host memory: a numpy array, shared, not copied."""

    def __init__(self, array):
        self._a = array

    @staticmethod
    def ortvalue_from_numpy(array, device_type="cpu", device_id=0):
        del device_id
        _cpu(device_type)
        if not isinstance(array, np.ndarray):
            raise TypeError("ortvalue_from_numpy takes a numpy array")
        return OrtValue(np.ascontiguousarray(array))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type=np.float32, device_type="cpu",
                                     device_id=0):
        del device_id
        _cpu(device_type)
        return OrtValue(np.zeros(shape, dtype=element_type))

    def numpy(self):
        return self._a

    def shape(self):
        return list(self._a.shape)

    def data_type(self):
        return _TYPE_NAMES.get(self._a.dtype.name, "tensor(%s)" % self._a.dtype.name)

    def element_type(self):
        return self._a.dtype.type

    def device_name(self):
        return "cpu"

    def data_ptr(self):
        return self._a.ctypes.data

    def is_tensor(self):
        return True

    def has_value(self):
        return True

    def update_inplace(self, array):
        """Copy ``array`` (same shape and dtype) into this value's memory."""
        array = np.asarray(array)
        if array.shape != self._a.shape or array.dtype != self._a.dtype:
            raise InvalidArgument("update_inplace: %s %s given, %s %s held"
                                  % (array.dtype, list(array.shape), self._a.dtype,
                                     self.shape()), _NPU_EINVAL)
        np.copyto(self._a, array)


def _from_pointer(element_type, shape, ptr):
    """The caller's memory at ``ptr`` as a numpy array (not copied)."""
    dtype = np.dtype(element_type)
    count = int(np.prod(shape)) if len(shape) else 1
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)


class IOBinding:
    """Inputs bound by name, outputs by name (filled by
    InferenceSession.run_with_iobinding, into bound memory if given)."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = []     # (name, array to fill, or None)
        self._results = []

    def bind_cpu_input(self, name, array):
        self._inputs[name] = np.asarray(array)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        del device_id
        _cpu(device_type)
        self._inputs[name] = _from_pointer(element_type, shape, buffer_ptr)

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        del device_id
        _cpu(device_type)
        dest = None
        if buffer_ptr is not None:
            dest = _from_pointer(element_type, shape, buffer_ptr)
        self._outputs.append((name, dest))

    def bind_ortvalue_output(self, name, ortvalue):
        self._outputs.append((name, ortvalue.numpy()))

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs = []
        self._results = []

    def get_outputs(self):
        return [OrtValue(r) for r in self._results]

    def copy_outputs_to_cpu(self):
        return [r.copy() for r in self._results]

    def _run(self, run_options):
        names = [n for n, _ in self._outputs] or None
        results = self._session.run(names, self._inputs, run_options)
        for (name, dest), r in zip(self._outputs, results):
            if dest is not None:
                if dest.shape != r.shape or dest.dtype != r.dtype:
                    raise InvalidArgument("output '%s': bound as %s %s, the run gives %s %s"
                                          % (name, dest.dtype, list(dest.shape), r.dtype,
                                             list(r.shape)), _NPU_EINVAL)
                np.copyto(dest, r)
        dests = [d for _, d in self._outputs] or [None] * len(results)
        self._results = [r if d is None else d for d, r in zip(dests, results)]
