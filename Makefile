# SPDX-License-Identifier: MIT
# The NPU stack: `make` builds everything, `make check` runs every test,
# `make demo` runs the demo. Dependencies are fetched by scripts/setup-deps
# into $(NPU_CACHE) (default ~/.cache/npu), never into the clone.

NPU_CACHE ?= $(HOME)/.cache/npu
export NPU_CACHE

BUILD := build
FW_VERSION := 2.0.0
FW_MAJOR := $(word 1,$(subst ., ,$(FW_VERSION)))
FW_MINOR := $(word 2,$(subst ., ,$(FW_VERSION)))
FW_PATCH := $(word 3,$(subst ., ,$(FW_VERSION)))

CC := gcc
HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -Iinclude -Iqemu-device/core -pthread
# make coverage builds the host tests and libnpu again, with gcov, in build/cov.
COVERAGE ?=
COV_FLAGS := $(if $(COVERAGE),--coverage)
HOST_CFLAGS += $(COV_FLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

FW_CC := riscv64-unknown-elf-gcc
FW_OBJCOPY := riscv64-unknown-elf-objcopy
FW_NM := riscv64-unknown-elf-nm
FW_CFLAGS := -march=rv32im -misa-spec=2.2 -mabi=ilp32 -Os -g -std=c11 \
	-ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns \
	-ffunction-sections -fdata-sections -Wall -Wextra -Werror -Iinclude \
	-DFW_VERSION_MAJOR=$(FW_MAJOR) -DFW_VERSION_MINOR=$(FW_MINOR) \
	-DFW_VERSION_PATCH=$(FW_PATCH)
FW_LDFLAGS := -nostdlib -T firmware/npu-fw.ld -Wl,--gc-sections \
	-Wl,--no-warn-rwx-segments

CORE_SRCS := $(wildcard qemu-device/core/*.c)
CORE_HDRS := $(wildcard qemu-device/core/*.h) $(wildcard include/*.h)
FW_SRCS := firmware/start.S $(wildcard firmware/*.c)
TEST_NAMES := test_rv32 test_mmu test_bootrom test_firmware test_faults test_migrate test_robustness test_quant \
	test_tensor test_nd_cmds test_train
TESTS := $(addprefix $(BUILD)/tests/,$(TEST_NAMES)) $(BUILD)/tests/test_quant_gemmlowp \
	$(BUILD)/tests/test_graph $(BUILD)/tests/test_graph_op $(BUILD)/tests/test_graph_train \
	$(BUILD)/tests/test_idx \
	$(BUILD)/tests/test_ocl $(BUILD)/tests/test_ocl_ops $(BUILD)/tests/test_placement \
	$(BUILD)/tests/test_backend $(BUILD)/tests/test_graph_hostile $(BUILD)/tests/test_onnx \
	$(BUILD)/tests/test_onnx_nets $(BUILD)/tests/test_registry $(BUILD)/tests/test_elemfn
VM_TESTS := $(BUILD)/tests/vm_smoke $(BUILD)/tests/npu_uapi_test $(BUILD)/tests/npu_usage_test \
	$(BUILD)/tests/npu_implicit_test \
	$(BUILD)/tests/libnpu_test \
	$(BUILD)/tests/npu_recovery_test $(BUILD)/tests/npu_fuzz $(BUILD)/tests/npu_soak \
	$(BUILD)/tests/npu_reset_test $(BUILD)/tests/npu_fw_test $(BUILD)/tests/npu_fault_workload
KSELFTEST := $(NPU_CACHE)/linux-src-extract

KREL = $(shell cat $(NPU_CACHE)/kernel/release 2>/dev/null)
KDIR = $(NPU_CACHE)/kernel/root/usr/src/linux-headers-$(KREL)
KMOD_SRCS := Kbuild $(wildcard driver/*.[ch]) $(wildcard include/*.h) $(wildcard uapi/drm/*.h)

# libnpu's version (npu.h's NPU_VERSION_*) and soname: Documentation/libnpu.rst, "ABI policy".
LIBNPU_VERSION := 2.6.0
LIBNPU_SOVERSION := 2
# libnpu/src is laid out by stage: base ref device ir import passes place plan exec api,
# and backends/ (npu, opencl, cpu) behind one interface.
LIBNPU_SRCS := $(sort $(shell find libnpu/src -name '*.c'))
LIBNPU_PRIV_HDRS := $(shell find libnpu/src -name '*.h')
LIBNPU_HDRS := $(wildcard libnpu/include/*.h)
# The command stream's definitions, which command-buffer apps write with
# (npu.h points to them): installed beside libnpu's headers.
CMD_HDRS := include/npu_cmd.h include/npu_cmd_nd.h include/npu_elemfn.h include/npu_cmd_train.h include/npu_types.h include/npu_quant.h include/npu_f32_bits.h
LIBNPU_OBJS := $(patsubst libnpu/src/%.c,$(BUILD)/libnpu/%.o,$(LIBNPU_SRCS)) \
	$(BUILD)/libnpu/ocl_program.o $(BUILD)/libnpu/gen/onnx.pb-c.o
# ONNX's protobuf schema, as libonnx-dev ships it; protoc-c makes its C code.
ONNX_PROTO := /usr/include/onnx/onnx.proto
# What a program linked with libnpu.a needs besides it.
LIBNPU_LIBS := $$(pkg-config --libs libdrm libprotobuf-c) -lm
LIBNPU_REF_SRCS := $(wildcard libnpu/src/ref/*.c)
# The OpenCL program: npu_quant.h's arithmetic, then the kernels.
OCL_SOURCES := include/npu_quant.h include/npu_elemfn.h include/npu_elemfn_eval.h libnpu/src/ir/nd_fn.h \
	libnpu/src/backends/opencl/ocl_flags.h $(sort $(wildcard libnpu/src/backends/opencl/kernels/*.cl))
LIBNPU_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -Ilibnpu/include -Ilibnpu/src \
	-Iinclude -Iuapi -I$(BUILD)/libnpu/gen $(COV_FLAGS)
LIBNPU := $(BUILD)/libnpu/libnpu.so.$(LIBNPU_VERSION) $(BUILD)/libnpu/libnpu.a
PREFIX ?= /usr/local

.PHONY: all deps build firmware tools tests host-tests qemu driver libnpu install examples python python-asan check fuzz soak sparse \
	check-models \
	docs \
	check-debug debug-kernel coverage demo bench bench-zoo clean

all: deps
	@$(MAKE) --no-print-directory build

deps:
	@scripts/setup-deps

build: firmware tools tests qemu driver libnpu examples python

firmware: $(BUILD)/firmware/npu-fw.bin $(BUILD)/firmware/npu/npu-fw.bin
tools: $(BUILD)/tools/mkfwimage $(BUILD)/tools/npu-fwboot $(BUILD)/tools/rv32-bench \
	$(BUILD)/tools/hold-bench $(BUILD)/tools/engine-bench \
	$(BUILD)/tools/npu-bench $(BUILD)/tools/gemm-bench $(BUILD)/tools/backend-bench \
	$(BUILD)/tools/stall-bench $(BUILD)/tools/sgemm-bench $(BUILD)/tools/npu-run \
	$(BUILD)/tools/npu-onnx-test $(BUILD)/tools/npu-smi $(BUILD)/tools/load-bench
tests: $(TESTS) $(VM_TESTS) $(BUILD)/fuzz/fuzz_core $(BUILD)/tests/npu-onnx-test-san
host-tests: firmware $(TESTS)

qemu:
	@scripts/build-qemu >/dev/null

libnpu: $(LIBNPU)

$(BUILD)/libnpu/ocl_program.c: scripts/embed-text $(OCL_SOURCES)
	@mkdir -p $(@D)
	scripts/embed-text ocl_program_src $(OCL_SOURCES) > $@.tmp && mv $@.tmp $@

$(BUILD)/libnpu/ocl_program.o: $(BUILD)/libnpu/ocl_program.c
	$(CC) $(LIBNPU_CFLAGS) -c -o $@ $<

$(BUILD)/libnpu/gen/onnx.pb-c.c $(BUILD)/libnpu/gen/onnx.pb-c.h &: $(ONNX_PROTO)
	@mkdir -p $(@D)
	protoc-c --c_out=$(@D) -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)

$(BUILD)/libnpu/gen/onnx.pb-c.o: $(BUILD)/libnpu/gen/onnx.pb-c.c
	$(CC) $(LIBNPU_CFLAGS) -c -o $@ $<

$(BUILD)/libnpu/%.o: libnpu/src/%.c $(BUILD)/libnpu/gen/onnx.pb-c.h $(LIBNPU_PRIV_HDRS) $(LIBNPU_HDRS) $(wildcard uapi/drm/*.h) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIBNPU_CFLAGS) $$(pkg-config --cflags libdrm) -c -o $@ $<

$(BUILD)/libnpu/libnpu.so.$(LIBNPU_VERSION): $(LIBNPU_OBJS) libnpu/libnpu.map
	$(CC) $(COV_FLAGS) -shared -Wl,-soname,libnpu.so.$(LIBNPU_SOVERSION) -Wl,--version-script=libnpu/libnpu.map \
		-Wl,--no-undefined -o $@ $(LIBNPU_OBJS) $(LIBNPU_LIBS)
	ln -sf libnpu.so.$(LIBNPU_VERSION) $(BUILD)/libnpu/libnpu.so.$(LIBNPU_SOVERSION)
	ln -sf libnpu.so.$(LIBNPU_SOVERSION) $(BUILD)/libnpu/libnpu.so

$(BUILD)/libnpu/libnpu.a: $(LIBNPU_OBJS)
	rm -f $@
	ar rcs $@ $(LIBNPU_OBJS)

# make install PREFIX=/somewhere: headers, shared and static library, pkg-config,
# npu-smi.
install: libnpu $(BUILD)/tools/npu-smi
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/tools/npu-smi $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(LIBNPU_HDRS) $(CMD_HDRS) $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(BUILD)/libnpu/libnpu.so.$(LIBNPU_VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libnpu.so.$(LIBNPU_VERSION) $(DESTDIR)$(PREFIX)/lib/libnpu.so.$(LIBNPU_SOVERSION)
	ln -sf libnpu.so.$(LIBNPU_SOVERSION) $(DESTDIR)$(PREFIX)/lib/libnpu.so
	install -m 644 $(BUILD)/libnpu/libnpu.a $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LIBNPU_VERSION)|' libnpu/libnpu.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/libnpu.pc
	@# The Python package, beside the library: PREFIX/lib/python3.X/dist-packages
	@# (where Debian's python3 looks for PREFIX=/usr/local), linked to it.
	@if $(PYTHON) -c 'import numpy, sysconfig, os; \
		assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' 2>/dev/null; then \
		py=$$($(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])'); \
		mkdir -p $(abspath $(BUILD))/python-build; \
		cd python && NPU_PREFIX=$(DESTDIR)$(PREFIX) NPU_RPATH=$(PREFIX)/lib \
		$(PYTHON) setup.py -q egg_info --egg-base $(abspath $(BUILD))/python-build \
			build --build-base $(abspath $(BUILD))/python-install \
			--build-lib $(DESTDIR)$(PREFIX)/lib/$$py/dist-packages 2>&1 | \
		grep -v -e 'byte-compiling' -e _BetaConfiguration -e 'warnings.warn(msg' -e '^$$' || true; \
	else \
		echo "install: the Python package left out: no numpy or Python.h (python3-numpy, python3-dev)"; \
	fi

# The example builds against an installed libnpu, found through pkg-config,
# exactly as an application outside this tree would.
EXAMPLE_PREFIX := $(abspath $(BUILD)/prefix)
# The install they build against, made once (its pkg-config file stands
# for it), so that parallel builds of the examples do not install at once.
EXAMPLE_PC := $(EXAMPLE_PREFIX)/lib/pkgconfig/libnpu.pc
$(EXAMPLE_PC): $(LIBNPU) $(LIBNPU_HDRS) $(CMD_HDRS) libnpu/libnpu.pc.in
	@$(MAKE) --no-print-directory install PREFIX=$(EXAMPLE_PREFIX) DESTDIR= >/dev/null

examples: $(BUILD)/examples/npu-copy $(BUILD)/examples/npu-fashion \
	$(BUILD)/examples/first-graph $(BUILD)/examples/first-cmdbuf

# The Python package (python/): its C extension over the libnpu that
# examples use (build/prefix), and the package, in build/python: usable
# from the tree with PYTHONPATH=build/python (make check does so, on the
# host and in the guest). setup.py rebuilds only what changed.
PYTHON := /usr/bin/python3
python: $(EXAMPLE_PC)
	@mkdir -p $(BUILD)/python-build
	@cd python && NPU_PREFIX=$(EXAMPLE_PREFIX) $(PYTHON) setup.py -q \
		egg_info --egg-base $(abspath $(BUILD))/python-build build \
		--build-base $(abspath $(BUILD))/python-build \
		--build-lib $(abspath $(BUILD))/python 2>&1 | \
		grep -v -e '^warning: build_py: byte-compiling' -e _BetaConfiguration \
			-e 'warnings.warn(msg' -e '^$$' || true
	@test -f $(BUILD)/python/npu/__init__.py && ls $(BUILD)/python/npu/_npu.*.so >/dev/null

# The extension again under ASan and UBSan, in build/python-asan: make check
# runs the Python tests on it with the sanitizers preloaded into python3.
python-asan: $(EXAMPLE_PC)
	@mkdir -p $(BUILD)/python-asan-build
	@cd python && CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" NPU_PREFIX=$(EXAMPLE_PREFIX) \
		$(PYTHON) setup.py -q egg_info --egg-base $(abspath $(BUILD))/python-asan-build \
		build --build-base $(abspath $(BUILD))/python-asan-build \
		--build-lib $(abspath $(BUILD))/python-asan 2>&1 | \
		grep -v -e '^warning: build_py: byte-compiling' -e _BetaConfiguration \
			-e 'warnings.warn(msg' -e '^$$' || true
	@ls $(BUILD)/python-asan/npu/_npu.*.so >/dev/null

# One-file examples: npu-copy, and Documentation/getting-started.rst's two.
$(BUILD)/examples/%: examples/%.c $(EXAMPLE_PC)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $< \
		$$(PKG_CONFIG_PATH=$(EXAMPLE_PREFIX)/lib/pkgconfig pkg-config --cflags --libs libnpu) \
		-Wl,-rpath,$(EXAMPLE_PREFIX)/lib

# An application under injected faults, also against the installed libnpu.
$(BUILD)/tests/npu_fault_workload: tests/vm/npu_fault_workload.c $(EXAMPLE_PC)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread -o $@ $< \
		$$(PKG_CONFIG_PATH=$(EXAMPLE_PREFIX)/lib/pkgconfig pkg-config --cflags --libs libnpu) \
		-Wl,-rpath,$(EXAMPLE_PREFIX)/lib

# The Fashion-MNIST demo, also against the installed libnpu (and zlib, libpng).
FASHION_SRCS := $(wildcard examples/fashion/*.c)
$(BUILD)/examples/npu-fashion: $(FASHION_SRCS) $(wildcard examples/fashion/*.h) $(EXAMPLE_PC)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -o $@ $(FASHION_SRCS) \
		$$(PKG_CONFIG_PATH=$(EXAMPLE_PREFIX)/lib/pkgconfig pkg-config --cflags --libs libnpu) \
		$$(pkg-config --cflags --libs zlib libpng) -lm -Wl,-rpath,$(EXAMPLE_PREFIX)/lib

# The module is built out of tree against Debian's headers, in a copy so
# the source tree stays clean. Warnings are errors.
driver: $(BUILD)/kmod/npu.ko

# The driver through sparse (Debian's), every file: no warning may be left.
sparse: $(BUILD)/kmod/npu.ko
	@touch $(BUILD)/kmod/driver/*.c
	@$(MAKE) -s -C $(KDIR) M=$(abspath $(BUILD)/kmod) C=2 modules 2>&1 | \
		{ ! grep -E 'warning|error'; }

$(BUILD)/kmod/npu.ko: $(KMOD_SRCS)
	@mkdir -p $(BUILD)/kmod
	@cp -p --parents $(KMOD_SRCS) $(BUILD)/kmod/
	$(MAKE) -C $(KDIR) M=$(abspath $(BUILD)/kmod) KCFLAGS=-Werror modules

# The version the image is built with, rewritten only when it changes, so
# that a new FW_VERSION alone rebuilds the image.
$(BUILD)/firmware/version: FORCE
	@mkdir -p $(@D)
	@echo $(FW_VERSION) | cmp -s - $@ || echo $(FW_VERSION) > $@

.PHONY: FORCE
FORCE:

$(BUILD)/firmware/npu-fw.elf: $(FW_SRCS) $(wildcard firmware/*.h) firmware/npu-fw.ld \
		$(wildcard include/*.h) $(BUILD)/firmware/version
	@mkdir -p $(@D)
	$(FW_CC) $(FW_CFLAGS) $(FW_LDFLAGS) -o $@ $(FW_SRCS) -lgcc

$(BUILD)/firmware/npu-fw.bin: $(BUILD)/firmware/npu-fw.elf $(BUILD)/tools/mkfwimage
	$(FW_OBJCOPY) -O binary $< $@.raw
	$(BUILD)/tools/mkfwimage $@.raw $@.tmp \
		0x$$($(FW_NM) $< | awk '$$3 == "_start" { print $$1 }') \
		0x$$($(FW_NM) $< | awk '$$3 == "_start" { print $$1 }') $(FW_VERSION)
	mv $@.tmp $@

# Where the guest kernel's firmware loader looks (firmware_class.path).
$(BUILD)/firmware/npu/npu-fw.bin: $(BUILD)/firmware/npu-fw.bin
	@mkdir -p $(@D)
	cp $< $@

# The ONNX tools, against libnpu.a (no LD_LIBRARY_PATH to set).
$(BUILD)/tools/npu-run $(BUILD)/tools/npu-onnx-test: $(BUILD)/tools/%: tools/%.c tools/onnx-tool.c tools/onnx-tool.h $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Ilibnpu/include -I$(BUILD)/libnpu/gen -o $@ $< tools/onnx-tool.c \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# How long a load takes and what it holds at its peak (its own models).
$(BUILD)/tools/load-bench: tools/load-bench.c $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Ilibnpu/include -I$(BUILD)/libnpu/gen -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# npu-onnx-test with libnpu compiled in under ASan and UBSan: make check
# runs ONNX's node tests and the malformed models through it.
$(BUILD)/tests/npu-onnx-test-san: tools/npu-onnx-test.c tools/onnx-tool.c tools/onnx-tool.h $(LIBNPU_SRCS) $(LIBNPU_PRIV_HDRS) $(LIBNPU_HDRS) $(BUILD)/libnpu/gen/onnx.pb-c.c $(BUILD)/libnpu/ocl_program.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror $(SAN_FLAGS) -Ilibnpu/include -Ilibnpu/src -Iinclude -Iuapi \
		-I$(BUILD)/libnpu/gen $$(pkg-config --cflags libdrm) -o $@ tools/npu-onnx-test.c tools/onnx-tool.c \
		$(LIBNPU_SRCS) $(BUILD)/libnpu/gen/onnx.pb-c.c $(BUILD)/libnpu/ocl_program.c $(LIBNPU_LIBS)

# libnpu's ONNX importer on models written byte by byte, and hostile ones:
# libnpu compiled in under ASan and UBSan, as for npu-onnx-test-san.
$(BUILD)/tests/test_onnx $(BUILD)/tests/test_onnx_nets: $(BUILD)/tests/%: tests/host/%.c tests/host/onnx_build.c tests/host/onnx_build.h tests/host/tap.h $(LIBNPU_SRCS) $(LIBNPU_PRIV_HDRS) $(LIBNPU_HDRS) $(BUILD)/libnpu/gen/onnx.pb-c.c $(BUILD)/libnpu/ocl_program.c
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -O1 $(SAN_FLAGS) -Itests/host -Ilibnpu/include -Ilibnpu/src -Iinclude -Iuapi \
		-I$(BUILD)/libnpu/gen $$(pkg-config --cflags libdrm) -o $@ $< tests/host/onnx_build.c \
		$(LIBNPU_SRCS) $(BUILD)/libnpu/gen/onnx.pb-c.c $(BUILD)/libnpu/ocl_program.c $(LIBNPU_LIBS)

$(BUILD)/tools/mkfwimage: tools/mkfwimage.c qemu-device/core/npu_crc32.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -o $@ tools/mkfwimage.c qemu-device/core/npu_crc32.c

$(BUILD)/tools/npu-fwboot: tools/npu-fwboot.c tests/host/harness.c tests/host/harness.h $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Itests/host -o $@ tools/npu-fwboot.c tests/host/harness.c $(CORE_SRCS) -lm

$(BUILD)/tools/npu-bench $(BUILD)/tools/backend-bench $(BUILD)/tools/stall-bench: $(BUILD)/tools/%: tools/%.c tests/vm/small_cnn.h $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Ilibnpu/include -Itests/vm -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# CLBlast is only the benchmark's yardstick: libnpu itself loads OpenCL at run time.
# The devices and their users, from libpci, sysfs and fdinfo (no libnpu).
$(BUILD)/tools/npu-smi: tools/npu-smi.c include/npu_hw.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude $$(pkg-config --cflags libpci) \
		-o $@ $< $$(pkg-config --libs libpci)

$(BUILD)/tools/sgemm-bench: tools/sgemm-bench.c $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Ilibnpu/include -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS) -lclblast -lOpenCL -lm

$(BUILD)/tools/gemm-bench: tools/gemm-bench.c qemu-device/core/npu_gemm.c qemu-device/core/npu_sgemm.c qemu-device/core/npu_interleave.c qemu-device/core/npu_split.c qemu-device/core/npu_pool.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -o $@ tools/gemm-bench.c qemu-device/core/npu_gemm.c \
		qemu-device/core/npu_sgemm.c qemu-device/core/npu_interleave.c qemu-device/core/npu_split.c qemu-device/core/npu_pool.c -ldnnl -lpthread

# The libFuzzer target on the device core (clang, ASan, UBSan).
FUZZ_CC := clang
FUZZ_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -pthread -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer -Iinclude -Iqemu-device/core -Itests/host
FUZZ_RUNS ?= 10000000
# The RISC-V interpreter without coverage instrumentation (the target feeds
# libFuzzer the firmware's own coverage instead), still under the sanitizers.
FUZZ_RV32 := qemu-device/core/npu_rv32.c
$(BUILD)/fuzz/npu_rv32.o: $(FUZZ_RV32) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(filter-out -fsanitize=%,$(FUZZ_CFLAGS)) -fsanitize=address,undefined -c -o $@ $<
$(BUILD)/fuzz/fuzz_core: tests/fuzz/fuzz_core.c tests/host/harness.c tests/host/harness.h $(CORE_SRCS) $(CORE_HDRS) $(BUILD)/fuzz/npu_rv32.o
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_core.c tests/host/harness.c \
		$(filter-out $(FUZZ_RV32),$(CORE_SRCS)) $(BUILD)/fuzz/npu_rv32.o -lm

# Harness and device core without sanitizers: it measures time.
$(BUILD)/tools/hold-bench $(BUILD)/tools/engine-bench: $(BUILD)/tools/%: tools/%.c tests/host/harness.c tests/host/harness.h $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Itests/host -o $@ $< tests/host/harness.c $(CORE_SRCS) -lm

$(BUILD)/tools/rv32-bench: tools/rv32-bench.c qemu-device/core/npu_rv32.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -o $@ tools/rv32-bench.c qemu-device/core/npu_rv32.c

# The device core, the host harness and libnpu's reference compiled once
# with the sanitizers, for the dozen host tests that link them (each used
# to compile them all again: most of a cold build's time).
CORE_SAN_OBJS := $(patsubst qemu-device/core/%.c,$(BUILD)/san/core/%.o,$(CORE_SRCS)) \
	$(BUILD)/san/harness.o
$(BUILD)/san/core/%.o: qemu-device/core/%.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -c -o $@ $<
$(BUILD)/san/harness.o: tests/host/harness.c tests/host/harness.h $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -c -o $@ $<
$(BUILD)/san/libnpu/%.o: libnpu/src/%.c $(LIBNPU_HDRS) $(LIBNPU_PRIV_HDRS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Ilibnpu/include -Ilibnpu/src -c -o $@ $<
san_obj = $(patsubst libnpu/src/%.c,$(BUILD)/san/libnpu/%.o,$(1))
# The references' kernels without their kernel table (ref_kern.c, which needs the IR's
# registry), with the parameters' definitions they check against (ir/*_params.c).
REF_SAN_OBJS := $(call san_obj,$(filter-out %/ref_kern.c,$(LIBNPU_REF_SRCS)) \
	libnpu/src/ir/nd_params.c libnpu/src/ir/kern_params.c libnpu/src/base/error.c)

$(BUILD)/tests/vm_smoke: tests/vm/vm_smoke.c tests/host/tap.h $(CORE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -o $@ $< $(CORE_SAN_OBJS) -lm

# Guest tests of the driver, with the kernel's kselftest harness (whose
# macros are not -Wextra clean) and libdrm.
$(BUILD)/tests/npu_%_test: tests/vm/npu_%_test.c tests/vm/npu_test_util.h $(wildcard uapi/drm/*.h) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
		-Wno-misleading-indentation -Wno-clobbered -Werror -Iinclude -Iuapi -I$(KSELFTEST) \
		$$(pkg-config --cflags libdrm) -o $@ $< $$(pkg-config --libs libdrm)

# The guest's uAPI fuzzer and soak.
$(BUILD)/tests/npu_fuzz $(BUILD)/tests/npu_soak: $(BUILD)/tests/%: tests/vm/%.c \
		tests/vm/npu_test_util.h $(wildcard uapi/drm/*.h) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude -Iuapi \
		$$(pkg-config --cflags libdrm) -o $@ $< $$(pkg-config --libs libdrm)

# With the demo's reader, models and training loop, for a short real training run.
FASHION_LIB := examples/fashion/idx.c examples/fashion/models.c examples/fashion/train.c
$(BUILD)/tests/libnpu_test: tests/vm/libnpu_test.c tests/vm/small_cnn.h $(FASHION_LIB) $(wildcard examples/fashion/*.h) $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
		-Wno-misleading-indentation -Wno-clobbered -Werror -Ilibnpu/include -I$(KSELFTEST) \
		-Iexamples/fashion -o $@ $< $(FASHION_LIB) $(BUILD)/libnpu/libnpu.a \
		$(LIBNPU_LIBS) $$(pkg-config --libs zlib)

# The tensor engine against libnpu's CPU reference (plain C, no libdrm).
$(BUILD)/tests/test_tensor: tests/host/test_tensor.c tests/host/isa.h $(REF_SAN_OBJS) $(call san_obj,libnpu/src/device/pack.c) $(LIBNPU_HDRS) $(CORE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -Ilibnpu/src -o $@ $< \
		$(REF_SAN_OBJS) $(call san_obj,libnpu/src/device/pack.c) $(CORE_SAN_OBJS) -lm

# The N-d inference commands, packed by libnpu, on the device core against fp64 loops.
$(BUILD)/tests/test_nd_cmds: tests/host/test_nd_cmds.c tests/host/isa.h $(REF_SAN_OBJS) $(call san_obj,libnpu/src/device/pack_nd.c) $(LIBNPU_HDRS) $(LIBNPU_PRIV_HDRS) $(CORE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -Ilibnpu/src -o $@ $< \
		$(REF_SAN_OBJS) $(call san_obj,libnpu/src/device/pack_nd.c) $(CORE_SAN_OBJS) -lm

# The element functions every implementation compiles, against long double oracles.
$(BUILD)/tests/test_elemfn: tests/host/test_elemfn.c tests/host/tap.h include/npu_elemfn.h include/npu_elemfn_eval.h \
		include/npu_train_math.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -o $@ $< -lm

# The training commands on the device core against libnpu's CPU reference.
$(BUILD)/tests/test_train: tests/host/test_train.c tests/host/isa.h $(REF_SAN_OBJS) $(call san_obj,libnpu/src/device/pack_train.c) $(LIBNPU_HDRS) $(CORE_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -Ilibnpu/src -o $@ $< \
		$(REF_SAN_OBJS) $(call san_obj,libnpu/src/device/pack_train.c) $(CORE_SAN_OBJS) -lm -lpthread

# libnpu's OpenCL backend, on whatever OpenCL the host has (PoCL here).
$(BUILD)/tests/test_ocl $(BUILD)/tests/test_ocl_ops $(BUILD)/tests/test_placement \
		$(BUILD)/tests/test_registry: \
		$(BUILD)/tests/%: tests/host/%.c $(LIBNPU_PRIV_HDRS) $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS) tests/host/tap.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -Ilibnpu/src -Iuapi $$(pkg-config --cflags libdrm) -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# The demo's data set reader.
$(BUILD)/tests/test_idx: tests/host/test_idx.c examples/fashion/idx.c examples/fashion/idx.h tests/host/tap.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Iexamples/fashion -o $@ $< \
		examples/fashion/idx.c -lz

# libnpu's training graphs; libnpu's allocations go through the test's
# __wrap_malloc, which can make one fail.
$(BUILD)/tests/test_graph_train: tests/host/test_graph_train.c $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS) tests/host/tap.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -Wl,--wrap=malloc -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# The backend interface from an application's side: a toy backend of the test's
# own; and the graph API fed garbage.
$(BUILD)/tests/test_backend $(BUILD)/tests/test_graph_hostile: $(BUILD)/tests/%: tests/host/%.c $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS) tests/host/tap.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# libnpu's graph API on its CPU backend (the static library, with libdrm).
$(BUILD)/tests/test_graph: tests/host/test_graph.c $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS) tests/host/tap.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# The graph API's door to the importer's registry (npu_graph_op), likewise.
$(BUILD)/tests/test_graph_op: tests/host/test_graph_op.c $(BUILD)/libnpu/libnpu.a $(LIBNPU_HDRS) \
		tests/host/tap.h
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -Ilibnpu/include -o $@ $< \
		$(BUILD)/libnpu/libnpu.a $(LIBNPU_LIBS)

# The arithmetic against gemmlowp itself (C++, Debian's libgemmlowp-dev).
$(BUILD)/tests/test_quant_gemmlowp: tests/host/test_quant_gemmlowp.cc include/npu_quant.h
	@mkdir -p $(@D)
	g++ -std=c++17 -O2 -g -Wall -Wextra -Werror -Iinclude $(SAN_FLAGS) -o $@ $<

$(BUILD)/tests/%: tests/host/%.c tests/host/tap.h $(CORE_SAN_OBJS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) $(SAN_FLAGS) -Itests/host -o $@ $< $(CORE_SAN_OBJS) -lm

check: all python-asan
	@scripts/run-checks $(TESTS)

# The whole model zoo (tests/models): each network against onnxruntime on
# the host (cpu, opencl), then on the NPU in the guest.
check-models: all
	@tests/models/zoo.sh
	@NPU_VM_MEM=2048 scripts/npu-vm -- sh -c "scripts/npu-load >/dev/null && \
		NPU_OPENCL_LIB=/nonexistent /usr/bin/python3 tests/models/check.py --backend npu \
		--runs 1 $${NPU_ZOO:-$${NPU_CACHE:-$$HOME/.cache/npu}/models}/*/"

# The documentation as HTML (Debian's python3-sphinx), every warning an error.
docs:
	@scripts/setup-deps --docs
	@rm -rf $(BUILD)/docs	# no cache: a page's warnings come back on every build
	@sphinx-build -W --keep-going -q -E -b html -d $(BUILD)/docs/doctrees Documentation \
		$(BUILD)/docs/html
	@echo "docs: $(BUILD)/docs/html/index.html"

# Long runs: the fuzzers (scripts/fuzz) and the soak.
fuzz: all
	@mkdir -p $(BUILD)/fuzz/qemu-corpus
	@FUZZ_RUNS=$(FUZZ_RUNS) scripts/fuzz

soak: all
	@scripts/run-checks --suite soak

# The guest suite on a kernel with KASAN, lockdep, DEBUG_OBJECTS, kmemleak,
# DMA_API_DEBUG and gcov (built once into $(NPU_CACHE)/kernel-debug), with
# npu.ko built for it with gcov; a kmemleak scan at the end.
KDIR_DEBUG := $(NPU_CACHE)/kernel-debug
DEBUG_VM_ENV := NPU_VM_KERNEL=$(KDIR_DEBUG) NPU_KMOD=$(abspath $(BUILD)/kmod-debug/npu.ko) \
	NPU_VM_MEM=2048 NPU_VM_TIMEOUT=3600

debug-kernel: deps
	@scripts/build-debug-kernel

$(BUILD)/kmod-debug/npu.ko: $(KMOD_SRCS) $(KDIR_DEBUG)/.done
	@mkdir -p $(BUILD)/kmod-debug
	@cp -p --parents $(KMOD_SRCS) $(BUILD)/kmod-debug/
	$(MAKE) -C $(KDIR_DEBUG)/build M=$(abspath $(BUILD)/kmod-debug) GCOV_PROFILE=y \
		KCFLAGS=-Werror modules

check-debug: all debug-kernel
	@$(MAKE) --no-print-directory $(BUILD)/kmod-debug/npu.ko
	@$(DEBUG_VM_ENV) scripts/run-checks --guest

# Line coverage: the host tests with gcov (qemu-device/core, libnpu), and
# the guest suite on the debug kernel (driver/). Report in build/coverage/.
coverage: all debug-kernel
	@$(MAKE) --no-print-directory $(BUILD)/kmod-debug/npu.ko
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/cov COVERAGE=1 host-tests >/dev/null
	@$(DEBUG_VM_ENV) scripts/coverage $(patsubst $(BUILD)/%,$(BUILD)/cov/%,$(TESTS))

# With NPU_BACKEND=opencl or cpu the demo runs on the host alone: only
# libnpu and the examples are built (no QEMU, no guest kernel, no driver).
ifneq ($(filter opencl cpu,$(NPU_BACKEND)),)
demo:
	@scripts/setup-deps --host
	@$(MAKE) --no-print-directory libnpu examples
	@scripts/demo
else
demo: all
	@scripts/demo
endif

# Measurements, not tests: a table on the terminal, JSON in build/bench/.
bench: all
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/tools/rv32-bench $(BUILD)/bench/rv32.json
	@$(BUILD)/tools/hold-bench $(BUILD)/bench/hold.json
	@OMP_NUM_THREADS=$${NPU_BENCH_THREADS:-2} $(BUILD)/tools/gemm-bench $(BUILD)/bench/gemm.json
	@$(BUILD)/tools/engine-bench $(BUILD)/bench/engine.json
	@echo "On the host, no NPU:"
	@$(BUILD)/tools/backend-bench $(BUILD)/bench/backends-host.json
	@$(BUILD)/tools/sgemm-bench $(BUILD)/bench/sgemm.json
	@$(BUILD)/tools/load-bench $(BUILD)/bench/load.json
	@scripts/bench-vm
	@scripts/bench-models
	@scripts/bench-summary $(BUILD)/bench

# Every network of the zoo (or NPU_ZOO's) on the NPU beside onnxruntime.
bench-zoo: all
	@scripts/bench-zoo

clean:
	rm -rf $(BUILD)
