// SPDX-License-Identifier: MIT
/*
 * test_graph_hostile.c - libnpu's graph API fed garbage: random tensors
 * (any dtype, rank 0-5, zero and huge dimensions, NaN scales), random ops
 * with random ids and attributes, compiles with random options (backends
 * by name, pins, strict, memory reuse) and runs, reads and writes with
 * random ids and sizes, all under ASan and UBSan. Every call must return
 * 0 or an error with a message; nothing may crash, leak or hang. Seeded,
 * so a failure replays.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "tap.h"

static uint64_t seed;

static uint32_t rnd(uint32_t n)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return n ? (uint32_t)(seed >> 33) % n : 0;
}

/*
 * Mostly small, sometimes absurd (every tensor that is accepted fits the
 * test's buffers: npu_plan_execute fills its outputs whole).
 */
static uint32_t dim(void)
{
	static const uint32_t odd[] = { 0, 65537, 0xffffffffu, 1u << 20 };

	return rnd(16) ? 1 + rnd(6) : odd[rnd(4)];
}

static int any_id(int nt)
{
	return rnd(16) ? (int)rnd((uint32_t)nt + 1) - (int)rnd(2) :
			 (int)(rnd(3) ? 0x7fffffff : -5);
}

static int8_t blob[1 << 16];

static int add_tensor(npu_graph *g)
{
	struct npu_tensor_desc d = { 0 };
	static float scales[64];

	d.dtype = (enum npu_dtype)(rnd(6) ? 1 + rnd(3) : rnd(9));
	d.rank = rnd(8) ? rnd(5) : rnd(7);
	for (int i = 0; i < 4; i++)
		d.dims[i] = dim();
	if (rnd(3)) {	/* mostly shapes an op could take, so that ops are added */
		d.dtype = rnd(4) ? NPU_DT_INT8 : NPU_DT_FLOAT32;
		d.rank = rnd(3) == 0 ? 0 : rnd(2) ? 4 : 2;	/* 0: its op infers it */
		for (int i = 0; i < 4; i++)
			d.dims[i] = 1 + rnd(3);
	}
	d.scale = rnd(10) ? 0.01f * (float)(1 + rnd(50)) : rnd(2) ? NAN : -1.0f;
	d.layout = rnd(8) ? NPU_LAYOUT_NHWC : rnd(4) ? NPU_LAYOUT_NCHW : rnd(9);
	d.zero_point = rnd(10) ? (int32_t)rnd(256) - 128 : (int32_t)rnd(1000) - 500;
	if (rnd(3) == 0) {
		size_t n = 1;

		for (uint32_t i = 0; i < d.rank && i < 4; i++)
			n *= d.dims[i];
		if (n * 4 <= sizeof(blob))	/* never more than the blob holds */
			d.data = blob;
	}
	if (d.data && rnd(4) == 0) {
		for (int i = 0; i < 64; i++)
			scales[i] = rnd(8) ? 0.001f * (float)(1 + rnd(100)) : -0.5f;
		d.quant_dim = rnd(5);
		if (d.quant_dim < d.rank && d.rank <= 4 && d.dims[d.quant_dim] <= 64)
			d.channel_scales = scales;
	}
	return npu_graph_tensor(g, &d);
}

static void add_op(npu_graph *g, int nt)
{
	uint32_t u[4], v[4];
	int ins[8];

	for (int i = 0; i < 4; i++) {
		u[i] = rnd(6);
		v[i] = rnd(6);
	}
	for (int i = 0; i < 8; i++)
		ins[i] = any_id(nt);
	switch (rnd(18)) {
	case 0:
		npu_graph_conv2d(g, any_id(nt), any_id(nt), any_id(nt), any_id(nt), rnd(4), rnd(3),
				 (int)rnd(2), (enum npu_activation)rnd(4));
		break;
	case 1:
		npu_graph_conv2d_ex(g, any_id(nt), any_id(nt), any_id(nt), any_id(nt),
				    &(struct npu_conv2d_attrs){
					.stride = { rnd(4), rnd(4) }, .dilation = { rnd(3), rnd(3) },
					.pad = { rnd(300), rnd(3), rnd(3), rnd(3) },
					.depthwise = (int)rnd(2), .act = (enum npu_activation)rnd(3),
					.groups = rnd(4) ? 1 : rnd(5) });
		break;
	case 2:
		npu_graph_fully_connected(g, any_id(nt), any_id(nt), any_id(nt), any_id(nt),
					  (enum npu_activation)rnd(4));
		break;
	case 3:
		npu_graph_pool(g, any_id(nt), any_id(nt), rnd(4), rnd(4), (int)rnd(2));
		break;
	case 4:
		npu_graph_pool_ex(g, any_id(nt), any_id(nt), &(struct npu_pool_attrs){
					.kernel = { rnd(4), rnd(70) }, .stride = { rnd(3), rnd(3) },
					.pad = { rnd(2), rnd(2), rnd(2), rnd(2) },
					.average = (int)rnd(2) });
		break;
	case 5:
		npu_graph_add(g, any_id(nt), any_id(nt), any_id(nt), (enum npu_activation)rnd(4));
		break;
	case 6:
		npu_graph_softmax(g, any_id(nt), any_id(nt), rnd(4) ? 1.0f : -1.0f);
		break;
	case 7:
		npu_graph_concat(g, ins, rnd(9), any_id(nt), rnd(5));
		break;
	case 8:
		npu_graph_pad(g, any_id(nt), any_id(nt), rnd(8) ? u : NULL, v);
		break;
	case 9:
		npu_graph_transpose(g, any_id(nt), any_id(nt), rnd(8) ? u : NULL);
		break;
	case 10:
		npu_graph_reshape(g, any_id(nt), any_id(nt));
		break;
	case 11:
		npu_graph_quantize(g, any_id(nt), any_id(nt));
		break;
	case 12:
		npu_graph_dequantize(g, any_id(nt), any_id(nt));
		break;
	case 13:
		npu_graph_relu(g, any_id(nt), any_id(nt));
		break;
	case 14:
		npu_graph_xent(g, any_id(nt), any_id(nt), any_id(nt));
		break;
	case 15:
		npu_graph_param(g, any_id(nt));
		if (rnd(4) == 0)
			npu_graph_backward(g, any_id(nt));
		if (rnd(4) == 0)
			npu_graph_optimizer(g, &(struct npu_optim_f32){
				.algo = (enum npu_optim_algo)rnd(5), .lr = 0.1f, .beta1 = 0.9f,
				.beta2 = 0.99f, .eps = 1e-8f });
		break;
	case 16:	/* the fp32 N-d ops, whose gradients npu_graph_backward adds; cast */
		switch (rnd(8)) {
		case 0:
			npu_graph_layer_norm(g, any_id(nt), any_id(nt), any_id(nt), any_id(nt),
					     rnd(4) ? 1e-5f : -1.0f);
			break;
		case 1:
			npu_graph_gelu(g, any_id(nt), any_id(nt), (int)rnd(2));
			break;
		case 2:
			npu_graph_matmul(g, any_id(nt), any_id(nt), any_id(nt), (int)rnd(2),
					 rnd(4) ? 0.5f : INFINITY);
			break;
		case 3:
			npu_graph_mean(g, any_id(nt), any_id(nt), rnd(7));
			break;
		case 4:
			npu_graph_sub(g, any_id(nt), any_id(nt), any_id(nt));
			break;
		case 5:
			npu_graph_div(g, any_id(nt), any_id(nt), any_id(nt));
			break;
		case 6:		/* any dtypes: bf16 with anything but fp32 is refused */
			npu_graph_cast(g, any_id(nt), any_id(nt));
			break;
		default:
			npu_graph_mul(g, any_id(nt), any_id(nt), any_id(nt), NPU_ACT_NONE);
			break;
		}
		break;
	default:
		npu_graph_custom(g, rnd(4) ? "x.op" : "", ins, rnd(9), ins + 1, rnd(5), blob,
				 rnd(3) ? rnd(64) : (1u << 21));
		break;
	}
	if (rnd(10) == 0)
		npu_graph_inputs(g, ins, rnd(4));
	if (rnd(10) == 0)
		npu_graph_outputs(g, ins + 2, rnd(4));
}

/* Whether tensor @id (if there is one) fits @cap bytes, as npu_plan_run's caller must know. */
static int tensor_fits(npu_graph *g, int id, size_t cap)
{
	struct npu_tensor_desc d;
	uint64_t n = 1;

	if (npu_graph_tensor_info(g, id, &d))
		return 1;	/* no such tensor: the call refuses it */
	for (uint32_t i = 0; i < d.rank && i < NPU_MAX_RANK; i++)
		n *= d.dims[i];
	return n * 8 <= cap;
}

/* Whether every declared input and output fits @cap bytes (npu_plan_execute's contract). */
static int io_fits(npu_graph *g, size_t cap)
{
	for (int out = 0; out < 2; out++)
		for (int i = 0; i < npu_graph_io_count(g, out); i++) {
			struct npu_array a;
			int fits;

			if (npu_graph_io_array(g, out, (uint32_t)i, &a))
				return 0;
			fits = a.bytes <= cap;
			npu_array_free(&a);
			if (!fits)
				return 0;
		}
	return 1;
}

static void compile_and_run(npu_graph *g, int nt)
{
	static const char *const names[] = { "cpu", "opencl", "npu", "none", "auto", NULL };
	const char *pin[8];
	npu_plan *p = NULL;
	struct npu_compile_opts o = { 0 };
	static unsigned char buf[1 << 16];
	int err;

	o.backend = (enum npu_backend)(rnd(8) ? NPU_BACKEND_CPU : rnd(7));
	o.strict = (int)rnd(2);
	o.reuse_memory = (int)rnd(2);
	if (rnd(4) == 0)
		o.backend_name = names[rnd(6)];
	if (rnd(4) == 0) {
		for (int i = 0; i < 8; i++)
			pin[i] = names[rnd(6)];
		o.pin = pin;
		o.npin = rnd(9);
	}
	err = npu_graph_compile_opts(g, NULL, &o, &p);
	if (err) {
		if (!*npu_graph_error(g)) {
			printf("#   seed %llu: %s, no message\n", (unsigned long long)seed,
			       npu_strerror(err));
			CHECK(!"a failed compile says why");
		}
		return;
	}
	for (int r = 0; r < 6; r++) {
		int a = any_id(nt), b = any_id(nt);
		size_t n = rnd(4) ? (size_t)rnd(64) : sizeof(buf);

		npu_plan_write(p, a, buf, n);
		if (tensor_fits(g, a, sizeof(buf)) && tensor_fits(g, b, sizeof(buf)))
			npu_plan_run(p, a, buf, b, buf);
		npu_plan_exec(p, (enum npu_exec_mode)rnd(3));
		npu_plan_read(p, b, buf, n);
		if (io_fits(g, sizeof(buf)))
			npu_plan_execute(p, (const void *[]){ buf, buf, buf, buf },
					 (void *[]){ buf, buf, buf, buf });
		npu_plan_set_lr(p, rnd(2) ? 0.5f : NAN);
	}
	npu_plan_op_backend(p, any_id(nt));
	npu_plan_node_backend(p, any_id(nt));
	if (rnd(2))
		npu_plan_free(p);	/* else npu_graph_free frees it */
}

static void test_random_graphs(void)
{
	unsigned int graphs = 0, compiled = 0, nodes = 0;

	/* The CPU only: what is checked here is the API, not a device. */
	setenv("NPU_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
	unsetenv("NPU_BACKEND");
	unsetenv("NPU_STRICT");
	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (int8_t)(i * 37);
	for (seed = 1; seed <= 60000; seed++) {
		uint64_t s = seed;
		npu_graph *g = npu_graph_new();
		int nt = 0, ops = (int)rnd(24);

		for (int t = 2 + (int)rnd(10); t > 0; t--)
			if (add_tensor(g) >= 0)
				nt++;
		for (int k = 0; k < ops; k++) {
			add_op(g, nt);
			if (rnd(3) == 0 && add_tensor(g) >= 0)
				nt++;
		}
		if (npu_graph_node_count(g) > 0) {
			compile_and_run(g, nt);
			compiled++;
			nodes += (unsigned int)npu_graph_node_count(g);
		}
		graphs++;
		npu_graph_free(g);
		seed = s;
	}
	printf("#   %u random graphs, %u with nodes (%u nodes) compiled or refused with a "
	       "message, then run with random ids and sizes\n", graphs, compiled, nodes);
	unsetenv("NPU_OPENCL_LIB");
}

TAP_MAIN(
	TAP_ENTRY(test_random_graphs),
)
