# SPDX-License-Identifier: MIT
"""The C extension's build: libnpu from NPU_PREFIX (make install's PREFIX;
pkg-config's libnpu.pc where it is not set), found at run time in
NPU_RPATH (default: where it was linked). pyproject.toml has the rest."""
import os
import shlex
import subprocess

import numpy
from setuptools import Extension, setup


def libnpu_flags():
    prefix = os.environ.get("NPU_PREFIX")
    if prefix:
        return [os.path.join(prefix, "include")], [os.path.join(prefix, "lib")]
    try:
        out = subprocess.run(["pkg-config", "--cflags", "--libs", "libnpu"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return [], []
    flags = shlex.split(out)
    return ([f[2:] for f in flags if f.startswith("-I")],
            [f[2:] for f in flags if f.startswith("-L")])


inc, lib = libnpu_flags()
rpath = [os.environ["NPU_RPATH"]] if os.environ.get("NPU_RPATH") else lib
setup(ext_modules=[Extension(
    "npu._npu", sources=["src/_npu.c", "src/graph.c", "src/ops.c"],
    depends=["src/npu_py.h"],
    include_dirs=inc + [numpy.get_include()],
    library_dirs=lib, runtime_library_dirs=rpath, libraries=["npu"],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror",
                        "-Wno-missing-field-initializers"],
)])
