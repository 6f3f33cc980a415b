# SPDX-License-Identifier: MIT
"""The exceptions of the npu package: onnxruntime's names, libnpu's messages."""


class NPUError(RuntimeError):
    """What libnpu refused; ``code`` is its NPU_E* code (negative)."""

    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code


# onnxruntime raises these (onnxruntime.capi.onnxruntime_pybind11_state).
class Fail(NPUError):
    """A run or a load that failed."""


class InvalidArgument(NPUError, ValueError):
    """A bad input: unknown name, dtype, shape, or a bad option."""


class NoSuchFile(NPUError, FileNotFoundError):
    """The model file is not there."""


class InvalidGraph(NPUError):
    """A model libnpu cannot read (malformed)."""


class NotImplemented(NPUError):  # noqa: A001 (onnxruntime's name)
    """An op, attribute or dtype libnpu does not implement."""


# libnpu's error codes (enum npu_error, npu.h) with a more precise class.
_NPU_EINVAL = -2
_NPU_ENOTSUP = -10


def _wrap(err):
    code, message = err.args if len(err.args) == 2 else (0, str(err))
    cls = {_NPU_ENOTSUP: NotImplemented, _NPU_EINVAL: InvalidGraph}.get(code, Fail)
    return cls(message, code)
