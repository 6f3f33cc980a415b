// SPDX-License-Identifier: MIT
/*
 * ocl_ops.c - libnpu's ops on the OpenCL device: each validates its
 * parameters as the CPU reference does, then enqueues its kernel
 * (libnpu/src/kernels) on buffers already on the device; nothing waits. The
 * requantization arrays (@mult, @shift) are the caller's to have checked
 * (npu_quant_valid), as they live on the device. At the end, the
 * one-call helpers of npu_ocl.h.
 */
#include <string.h>

#include "npu.h"
#include "ir/kern_params.h"
#include "npu_train_math.h"
#include "backends/opencl/ocl_priv.h"

static cl_mem or_dummy(const struct npu_ocl *o, cl_mem m)
{
	return m ? m : o->dummy;
}

int ocl_gemm_i8(struct npu_ocl *o, const struct npu_gemm_i8 *p, cl_mem a, cl_mem b,
		cl_mem bias, cl_mem mult, cl_mem shift, cl_mem out)
{
	cl_int hb = !!bias, pt;
	cl_mem bm;

	if (!npu_gemm_i8_valid(p) || !a || !b || !mult || !shift || !out)
		return NPU_EINVAL;
	/* bit 0: one requantization for all channels; bit 1: ONNX's */
	pt = (p->per_tensor ? 1 : 0) | (p->requant == NPU_REQUANT_ONNX ? 2 : 0);
	bm = or_dummy(o, bias);
	{
		size_t g[2] = { p->n, p->m };
		const struct karg args[] = {
			KMEM(a), KMEM(b), KMEM(bm), KVAL(hb), KMEM(mult), KMEM(shift), KVAL(pt),
			KMEM(out), KVAL(p->m), KVAL(p->n), KVAL(p->k), KVAL(p->a_zero),
			KVAL(p->out_zero), KVAL(p->act_min), KVAL(p->act_max),
		};

		return ocl_enqueue(o, "gemm_i8", args, 15, 2, g);
	}
}

/*
 * A dense convolution's weights @w (@elem bytes each; @out_c, @taps,
 * @in_c) packed by kernel @pack for a blocked kernel, into *@wt: into
 * @kept when they are constant, made again only when the buffer or the
 * generation @gen moves; else a scratch buffer the caller releases once
 * it has enqueued what reads it. NPU_ENOMEM when there is no room.
 */
static int packed_weights(struct npu_ocl *o, const char *pack, cl_mem w, size_t elem,
			  cl_uint out_c, cl_uint taps, cl_uint in_c, struct ocl_kept *kept,
			  uint64_t gen, cl_mem *wt)
{
	cl_ulong cnt = (cl_ulong)taps * ((out_c + 7) / 8) * 8 * in_c;
	int fresh = !kept || !kept->m || kept->src != w || kept->gen != gen;
	size_t n = (size_t)cnt;
	int err = 0;

	*wt = kept && kept->m ? kept->m : ocl_buffer(o, elem * n, NULL, 0);
	if (!*wt)
		return NPU_ENOMEM;
	if (fresh) {
		const struct karg args[] = { KMEM(w), KMEM(*wt), KVAL(out_c), KVAL(taps),
					     KVAL(in_c), KVAL(cnt) };

		err = ocl_enqueue(o, pack, args, 6, 1, &n);
	}
	if (kept) {
		kept->m = *wt;
		kept->src = err ? NULL : w;
		kept->gen = gen;
	}
	if (err && !kept)
		o->api.ReleaseMemObject(*wt);
	return err;
}

/*
 * A dense int8 convolution, blocked (conv2d_i8_blk: the reference's
 * bytes), its filter packed first (packed_weights(): kept while constant).
 * NPU_ENOMEM when there is no room for it.
 */
static int conv2d_i8_blocked(struct npu_ocl *o, const struct npu_conv2d_i8 *p,
			     const cl_uint16 *gp, cl_mem in, cl_mem filter, cl_mem bm, cl_int hb,
			     cl_mem mult, cl_mem shift, cl_int pt, cl_mem out,
			     struct ocl_kept *kept, uint64_t gen)
{
	cl_uint taps = p->k_h * p->k_w;
	cl_ulong cnt = (cl_ulong)p->batch * p->out_h * ((p->out_w + 7) / 8) * ((p->out_c + 7) / 8);
	cl_uint16 geo = *gp;
	size_t n = (size_t)cnt;
	cl_mem wt;
	int err = packed_weights(o, "conv2d_i8_w_pack", filter, 1, p->out_c, taps, p->in_c, kept,
				 gen, &wt);

	if (err)
		return err;
	/* neighbours share the larger operand, as conv2d_f32_fwd8's */
	geo.sf = (uint64_t)taps * p->out_c * p->in_c >
		 (uint64_t)p->batch * p->in_h * p->in_w * p->in_c;
	{
		const struct karg args[] = {
			KMEM(in), KMEM(wt), KMEM(bm), KVAL(hb), KMEM(mult), KMEM(shift),
			KVAL(pt), KMEM(out), KVAL(geo), KVAL(p->in_zero), KVAL(p->out_zero),
			KVAL(p->act_min), KVAL(p->act_max), KVAL(cnt),
		};

		err = ocl_enqueue(o, "conv2d_i8_blk", args, 14, 1, &n);
	}
	if (!kept)
		o->api.ReleaseMemObject(wt);
	return err;
}

int ocl_conv2d_i8(struct npu_ocl *o, const struct npu_conv2d_i8 *p, cl_mem in, cl_mem filter,
		  cl_mem bias, cl_mem mult, cl_mem shift, cl_mem out, struct ocl_kept *kept,
		  uint64_t gen)
{
	cl_uint16 geo;
	cl_int hb = !!bias, pt;
	cl_mem bm;
	size_t n;

	if (!npu_conv2d_i8_valid(p) || !in || !filter || !mult || !shift || !out)
		return NPU_EINVAL;
	pt = (p->per_tensor ? 1 : 0) | (p->requant == NPU_REQUANT_ONNX ? 2 : 0);
	bm = or_dummy(o, bias);
	geo = (cl_uint16){ { p->batch, p->in_h, p->in_w, p->in_c, p->out_h, p->out_w, p->out_c,
			     p->k_h, p->k_w, p->stride_h, p->stride_w, p->dil_h, p->dil_w,
			     p->pad_top, p->pad_left, !!p->depthwise } };
	if (!p->depthwise && p->groups <= 1) {
		int err = conv2d_i8_blocked(o, p, &geo, in, filter, bm, hb, mult, shift, pt, out,
					    kept, gen);

		if (err != NPU_ENOMEM)	/* no room for the filter packed: one by one */
			return err;
	}
	n = (size_t)p->batch * p->out_h * p->out_w * p->out_c;
	{
		cl_uint groups = p->groups > 1 ? p->groups : 1;
		const struct karg args[] = {
			KMEM(in), KMEM(filter), KMEM(bm), KVAL(hb), KMEM(mult), KMEM(shift),
			KVAL(pt), KMEM(out), KVAL(geo), KVAL(p->in_zero), KVAL(p->out_zero),
			KVAL(p->act_min), KVAL(p->act_max), KVAL(groups),
		};

		return ocl_enqueue(o, "conv2d_i8", args, 14, 1, &n);
	}
}

int ocl_pool_i8(struct npu_ocl *o, const struct npu_pool_i8 *p, cl_mem in, cl_mem out)
{
	cl_int avg;
	size_t n;

	if (!npu_pool_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	avg = !!p->average;
	n = (size_t)p->batch * p->out_h * p->out_w * p->c;
	{
		const struct karg args[] = {
			KMEM(in), KMEM(out), KMEM(o->flag), KVAL(p->batch), KVAL(p->in_h),
			KVAL(p->in_w), KVAL(p->c), KVAL(p->out_h), KVAL(p->out_w), KVAL(p->k_h),
			KVAL(p->k_w), KVAL(p->stride_h), KVAL(p->stride_w), KVAL(p->pad_top),
			KVAL(p->pad_left), KVAL(p->act_min), KVAL(p->act_max), KVAL(avg),
		};

		return ocl_enqueue(o, "pool_i8", args, 18, 1, &n);
	}
}

int ocl_eltwise_i8(struct npu_ocl *o, const struct npu_eltwise_i8 *p, cl_mem a, cl_mem b,
		   cl_mem out)
{
	cl_int16 q;
	size_t n;

	if (!npu_eltwise_i8_valid(p) || !a || !b || !out)
		return NPU_EINVAL;
	q = (cl_int16){ { p->a_zero, p->b_zero, p->out_zero, (cl_int)p->left_shift, p->a_mult,
			  p->a_shift, p->b_mult, p->b_shift, p->out_mult, p->out_shift,
			  p->act_min, p->act_max, !!p->mul, (cl_int)p->requant } };
	n = p->count;
	{
		uint32_t od[4], as[4], bs[4];
		cl_uint4 vod, vas, vbs;

		npu_eltwise_i8_strides(p, od, as, bs);
		vod = (cl_uint4){ { od[0], od[1], od[2], od[3] } };
		vas = (cl_uint4){ { as[0], as[1], as[2], as[3] } };
		vbs = (cl_uint4){ { bs[0], bs[1], bs[2], bs[3] } };
		const struct karg args[] = { KMEM(a), KMEM(b), KMEM(out), KVAL(q), KVAL(p->count),
					     KVAL(vod), KVAL(vas), KVAL(vbs) };

		return ocl_enqueue(o, "eltwise_i8", args, 8, 1, &n);
	}
}

int ocl_softmax_i8(struct npu_ocl *o, const struct npu_softmax_i8 *p, cl_mem in, cl_mem out)
{
	size_t n;

	if (!npu_softmax_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	n = p->rows;
	{
		const struct karg args[] = {
			KMEM(in), KMEM(out), KVAL(p->rows), KVAL(p->depth), KVAL(p->beta_mult),
			KVAL(p->beta_left_shift), KVAL(p->diff_min),
		};

		return ocl_enqueue(o, "softmax_i8", args, 7, 1, &n);
	}
}

int ocl_quantize(struct npu_ocl *o, const struct npu_quantize *p, cl_mem in, cl_mem out)
{
	size_t n;

	if (!npu_quantize_valid(p) || !in || !out)
		return NPU_EINVAL;
	n = p->count;
	if (p->dequantize) {
		cl_double scale = p->scale;
		const struct karg args[] = {
			KMEM(in), KMEM(out), KVAL(p->count), KVAL(scale), KVAL(p->zero_point),
		};

		if (!o->fp64)
			return NPU_ENOTSUP;	/* placement keeps it off such devices */
		return ocl_enqueue(o, "dequantize_i8", args, 5, 1, &n);
	} else {
		cl_float scale = (float)p->scale;
		const struct karg args[] = {
			KMEM(in), KMEM(out), KVAL(p->count), KVAL(scale), KVAL(p->zero_point),
		};

		return ocl_enqueue(o, "quantize_i8", args, 5, 1, &n);
	}
}

int ocl_pad(struct npu_ocl *o, const struct npu_pad *p, cl_mem in, cl_mem out)
{
	uint32_t d[4], bf[4], af[4];
	cl_uint16 g = { { 0 } };
	size_t n = 1;

	if (!npu_pad_valid(p) || !in || !out)
		return NPU_EINVAL;
	npu_pad_rank4(p, d, bf, af);
	for (int i = 0; i < 4; i++) {
		g.s[i] = bf[i] + d[i] + af[i];
		g.s[4 + i] = bf[i];
		g.s[8 + i] = d[i];
		n *= g.s[i];
	}
	{
		const struct karg args[] = { KMEM(in), KMEM(out), KVAL(g), KVAL(p->value) };

		return ocl_enqueue(o, "pad_i8", args, 4, 1, &n);
	}
}

int ocl_transpose(struct npu_ocl *o, const struct npu_transpose *p, cl_mem in, cl_mem out)
{
	uint32_t od[4];
	size_t step[4], n = 1;
	cl_ulong8 g;

	if (!npu_transpose_valid(p) || !in || !out)
		return NPU_EINVAL;
	npu_transpose_rank4(p, od, step);
	for (int i = 0; i < 4; i++) {
		g.s[i] = od[i];		/* the output's dims ... */
		g.s[4 + i] = step[i];	/* ... and where each steps in the input */
		n *= od[i];
	}
	{
		const struct karg args[] = { KMEM(in), KMEM(out), KVAL(g), KVAL(p->elem_size) };

		return ocl_enqueue(o, "transpose", args, 4, 1, &n);
	}
}

/* Each input's rows into their columns of the output: rectangle copies, no kernel. */
int ocl_concat(struct npu_ocl *o, const struct npu_concat *p, const cl_mem *in, cl_mem out)
{
	struct npu_concat_rows r;
	size_t offset = 0;

	if (!npu_concat_valid(p) || !in || !out)
		return NPU_EINVAL;
	npu_concat_rows(p, &r);
	for (uint32_t i = 0; i < p->count; i++) {
		size_t row = (size_t)(p->axis_dims[i] * r.inner);
		size_t src[3] = { 0, 0, 0 }, dst[3] = { offset, 0, 0 };
		size_t region[3] = { row, (size_t)r.outer, 1 };
		cl_int err;

		if (!in[i])
			return NPU_EINVAL;
		err = o->api.EnqueueCopyBufferRect(o->queue, in[i], out, src, dst, region, row, 0,
						   (size_t)(r.axis_total * r.inner), 0, 0, NULL,
						   NULL);
		if (err != CL_SUCCESS)
			return NPU_EIO;
		offset += row;
	}
	return NPU_OK;
}

int ocl_gemm_f32(struct npu_ocl *o, const struct npu_gemm_f32 *p, cl_mem a, cl_mem b,
		 cl_mem c)
{
	cl_int ta, tb, bf;
	size_t g[2];

	if (!npu_gemm_f32_valid(p) || !a || !b || !c)
		return NPU_EINVAL;
	if (!p->bf16 && p->beta == 0.0f) {
		/*
		 * fp32 without C: the matmul's blocked kernels (register
		 * blocks, or a GPU's work-group tiles) compute the same sums in
		 * the same order, then alpha times each, as gemm_f32 does.
		 */
		struct nd_matmul q = { .m = p->m, .n = p->n, .k = p->k,
				       .trans_a = !!p->trans_a, .trans_b = !!p->trans_b,
				       .adt = NPU_DT_FLOAT32, .bdt = NPU_DT_FLOAT32,
				       .alpha = p->alpha };

		return ocl_nd_matmul(o, &q, a, b, NULL, NULL, c);
	}
	ta = !!p->trans_a;
	tb = !!p->trans_b;
	bf = !!p->bf16;
	g[0] = p->n;
	g[1] = p->m;
	{
		const struct karg args[] = {
			KMEM(a), KMEM(b), KMEM(c), KVAL(p->m), KVAL(p->n), KVAL(p->k), KVAL(ta),
			KVAL(tb), KVAL(bf), KVAL(p->alpha), KVAL(p->beta),
		};

		return ocl_enqueue(o, "gemm_f32", args, 11, 2, g);
	}
}

/*
 * The fp32 forward convolution, blocked (conv2d_f32_fwd8: the same bits as
 * conv2d_f32_fwd, then eltwise_f32's bias and ReLU): the weights packed
 * first (conv2d_f32_w_pack, packed_weights(): kept while constant), a
 * tap's 8 output channels one vector and a block's taps one sequential
 * run. NPU_ENOMEM when there is no room for them.
 */
static int conv2d_f32_blocked(struct npu_ocl *o, const struct npu_conv2d_f32 *p,
			      const cl_uint16 *geo, uint64_t nw, cl_mem x, cl_mem w, cl_mem y,
			      const struct ocl_conv_ext *ext)
{
	static const struct ocl_conv_ext none;
	const struct ocl_conv_ext *e = ext ? ext : &none;
	cl_ulong cnt = (cl_ulong)p->batch * p->out_h * ((p->out_w + 7) / 8) *	/* CONV_POS */
		       ((p->out_c + 7) / 8);
	cl_mem bias = or_dummy(o, e->bias), wt;
	cl_uint16 g = *geo;
	size_t n = (size_t)cnt;
	int err = packed_weights(o, "conv2d_f32_w_pack", w, sizeof(float), p->out_c,
				 (cl_uint)(nw / p->out_c / p->in_c), p->in_c, e->kept, e->gen, &wt);

	if (err)
		return err;
	/* Neighbours share the larger operand (conv2d_f32_fwd8), and the epilogue. */
	g.sf = (nw > (uint64_t)p->batch * p->in_h * p->in_w * p->in_c) | (e->bias ? 2 : 0) |
	       (e->relu ? 4 : 0);
	{
		const struct karg args[] = { KMEM(x), KMEM(wt), KMEM(bias), KMEM(y), KVAL(g),
					     KVAL(cnt) };

		err = ocl_enqueue(o, "conv2d_f32_fwd8", args, 6, 1, &n);
	}
	if (!e->kept)
		o->api.ReleaseMemObject(wt);
	return err;
}

int ocl_conv2d_f32(struct npu_ocl *o, const struct npu_conv2d_f32 *p, enum npu_conv_pass pass,
		   cl_mem x, cl_mem w, cl_mem y, const struct ocl_conv_ext *ext)
{
	static const char *const name[] = {
		[NPU_CONV_FORWARD] = "conv2d_f32_fwd",
		[NPU_CONV_BACKWARD_DATA] = "conv2d_f32_bwd_data",
		[NPU_CONV_BACKWARD_FILTER] = "conv2d_f32_bwd_filter",
	};
	uint64_t nx, nw, ny;
	cl_uint16 g;
	cl_int bf;
	size_t n;
	int err;

	if (!npu_conv2d_f32_valid(p, pass) || !x || !w || !y ||
	    (ext && pass != NPU_CONV_FORWARD))
		return NPU_EINVAL;
	npu_conv2d_f32_sizes(p, &nx, &nw, &ny);
	n = pass == NPU_CONV_FORWARD ? ny : pass == NPU_CONV_BACKWARD_DATA ? nx : nw;
	bf = !!p->bf16;
	g = (cl_uint16){ { p->batch, p->in_h, p->in_w, p->in_c, p->out_h, p->out_w, p->out_c,
			   p->k_h, p->k_w, p->stride_h, p->stride_w, p->dil_h, p->dil_w,
			   p->pad_top, p->pad_left, npu_conv2d_f32_groups(p) } };
	if (pass == NPU_CONV_FORWARD && !bf && g.sf == 1) {	/* blocked: one group */
		err = conv2d_f32_blocked(o, p, &g, nw, x, w, y, ext);
		if (err != NPU_ENOMEM)	/* no room for the weights packed: one by one */
			return err;
	}
	{
		const struct karg args[] = { KMEM(x), KMEM(w), KMEM(y), KVAL(g), KVAL(bf) };

		err = ocl_enqueue(o, name[pass], args, 5, 1, &n);
	}
	if (!err && ext && ext->bias) {
		struct npu_eltwise_f32 b = { (uint32_t)ny, NPU_EF_BIAS, p->out_c, 0 };

		err = ocl_eltwise_f32(o, &b, y, ext->bias, y);
	}
	if (!err && ext && ext->relu) {
		struct npu_eltwise_f32 r = { (uint32_t)ny, NPU_EF_RELU, 0, 0 };

		err = ocl_eltwise_f32(o, &r, y, NULL, y);
	}
	return err;
}

int ocl_pool_f32(struct npu_ocl *o, const struct npu_pool_f32 *p, cl_mem x, cl_mem y,
		 cl_mem dx)
{
	int bwd = p && (p->mode == NPU_FPOOL_MAX_BACKWARD || p->mode == NPU_FPOOL_AVG_BACKWARD);
	cl_int avg;
	uint64_t nx, ny;
	cl_uint16 g;
	size_t n;

	if (!npu_pool_f32_valid(p) || !y || (bwd ? !dx : !!dx) ||
	    (!x && p->mode != NPU_FPOOL_AVG_BACKWARD))
		return NPU_EINVAL;
	npu_pool_f32_sizes(p, &nx, &ny);
	avg = p->mode == NPU_FPOOL_AVG || p->mode == NPU_FPOOL_AVG_BACKWARD;
	g = (cl_uint16){ { p->batch, p->in_h, p->in_w, p->c, p->out_h, p->out_w, p->k_h, p->k_w,
			   p->stride_h, p->stride_w } };
	x = or_dummy(o, x);
	if (bwd) {
		const struct karg args[] = { KMEM(x), KMEM(y), KMEM(dx), KVAL(g), KVAL(avg) };

		n = nx;
		return ocl_enqueue(o, "pool_f32_bwd", args, 5, 1, &n);
	} else {
		const struct karg args[] = { KMEM(x), KMEM(y), KVAL(g), KVAL(avg) };

		n = ny;
		return ocl_enqueue(o, "pool_f32_fwd", args, 4, 1, &n);
	}
}

int ocl_eltwise_f32(struct npu_ocl *o, const struct npu_eltwise_f32 *p, cl_mem a, cl_mem b,
		    cl_mem out)
{
	int two = p && (p->op <= NPU_EF_AXPY || p->op == NPU_EF_RELU_BACKWARD ||
			p->op == NPU_EF_BIAS);
	cl_int op;
	size_t n;

	if (!npu_eltwise_f32_valid(p) || !a || !out || (two && !b))
		return NPU_EINVAL;
	op = p->op;
	n = p->count;
	b = or_dummy(o, b);
	{
		const struct karg args[] = {
			KMEM(a), KMEM(b), KMEM(out), KVAL(p->count), KVAL(op), KVAL(p->cols),
			KVAL(p->alpha),
		};

		return ocl_enqueue(o, "eltwise_f32", args, 7, 1, &n);
	}
}

int ocl_reduce_f32(struct npu_ocl *o, const struct npu_reduce_f32 *p, cl_mem in, cl_mem out)
{
	cl_int oc, acc;
	size_t n;

	if (!npu_reduce_f32_valid(p) || !in || !out)
		return NPU_EINVAL;
	oc = !!p->over_cols;
	acc = !!p->accumulate;
	n = oc ? p->rows : p->cols;
	{
		const struct karg args[] = {
			KMEM(in), KMEM(out), KVAL(p->rows), KVAL(p->cols), KVAL(oc), KVAL(acc),
		};

		return ocl_enqueue(o, "reduce_f32", args, 6, 1, &n);
	}
}

int ocl_xent_f32(struct npu_ocl *o, const struct npu_xent_f32 *p, cl_mem logits,
		 cl_mem labels, cl_mem loss, cl_mem dlogits)
{
	cl_int wl = !!loss, wd = !!dlogits;
	size_t n;

	if (!npu_xent_f32_valid(p) || !logits || !labels)
		return NPU_EINVAL;
	n = p->rows;
	loss = or_dummy(o, loss);
	dlogits = or_dummy(o, dlogits);
	{
		const struct karg args[] = {
			KMEM(logits), KMEM(labels), KMEM(loss), KMEM(dlogits), KMEM(o->flag),
			KVAL(p->rows), KVAL(p->classes), KVAL(p->grad_scale), KVAL(wl), KVAL(wd),
		};

		return ocl_enqueue(o, "xent_f32", args, 10, 1, &n);
	}
}

int ocl_optim_f32(struct npu_ocl *o, const struct npu_optim_f32 *p, cl_mem w, cl_mem g,
		  cl_mem m, cl_mem v)
{
	int adam = p && (p->algo == NPU_OPTIM_ADAM || p->algo == NPU_OPTIM_ADAMW);
	struct npu_optim_step s;
	cl_float8 sv;
	cl_int algo;
	size_t n;

	if (!npu_optim_f32_valid(p) || !w || !g || ((adam || p->beta1 != 0.0f) && !m) ||
	    (adam && !v))
		return NPU_EINVAL;
	/* The bias corrections in double on the host, as the reference works them. */
	npu_optim_prepare(&s, (uint32_t)p->algo, p->lr, p->beta1, p->beta2, p->eps, p->wd,
			  p->step ? p->step : 1);
	sv = (cl_float8){ { s.lr, s.beta1, s.beta2, s.eps, s.wd, s.c1, s.c2, 0 } };
	algo = p->algo;
	n = p->count;
	m = or_dummy(o, m);
	v = or_dummy(o, v);
	{
		const struct karg args[] = {
			KMEM(w), KMEM(g), KMEM(m), KMEM(v), KVAL(p->count), KVAL(algo), KVAL(sv),
		};

		return ocl_enqueue(o, "optim_f32", args, 7, 1, &n);
	}
}

/* ---- one-call helpers (npu_ocl.h): copy in, run, copy out ---------------- */

int npu_ocl_gemm_i8_v(size_t size, npu_ocl *o, const struct npu_gemm_i8 *p_in, const int8_t *a, const int8_t *b,
		    const int32_t *bias, const int32_t *mult, const int32_t *shift, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_gemm_i8, p, p_in, size);
	uint32_t nq = p && p->per_tensor ? 1 : p ? p->n : 0;
	cl_mem m[6] = { NULL };
	int e;

	if (!o || !npu_gemm_i8_valid(p) || !a || !b || !mult || !shift || !out ||
	    !npu_quant_valid(p->requant, mult, shift, nq))
		return NPU_EINVAL;
	m[0] = ocl_buffer(o, (size_t)p->m * p->k, (void *)a, 1);
	m[1] = ocl_buffer(o, (size_t)p->n * p->k, (void *)b, 1);
	m[2] = bias ? ocl_buffer(o, sizeof(int32_t) * p->n, (void *)bias, 1) : NULL;
	m[3] = ocl_buffer(o, sizeof(int32_t) * nq, (void *)mult, 1);
	m[4] = ocl_buffer(o, sizeof(int32_t) * nq, (void *)shift, 1);
	m[5] = ocl_buffer(o, (size_t)p->m * p->n, out, 0);
	if (m[0] && m[1] && (m[2] || !bias) && m[3] && m[4] && m[5]) {
		e = ocl_gemm_i8(o, p, m[0], m[1], m[2], m[3], m[4], m[5]);
		e = e ? e : ocl_to_host(o, m[5], (size_t)p->m * p->n, out);
	} else {
		e = NPU_ENOMEM;
	}
	ocl_release(o, m, 6);
	return e;
}

int npu_ocl_pool_i8_v(size_t size, npu_ocl *o, const struct npu_pool_i8 *p_in, const int8_t *in, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_pool_i8, p, p_in, size);
	cl_mem m[2] = { NULL };
	size_t n_in, n_out;
	int e;

	if (!o || !npu_pool_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	n_in = (size_t)p->batch * p->in_h * p->in_w * p->c;
	n_out = (size_t)p->batch * p->out_h * p->out_w * p->c;
	m[0] = ocl_buffer(o, n_in, (void *)in, 1);
	m[1] = ocl_buffer(o, n_out, out, 0);
	if (m[0] && m[1]) {
		e = ocl_pool_i8(o, p, m[0], m[1]);
		e = e ? e : ocl_to_host(o, m[1], n_out, out);
		e = e ? e : ocl_finish(o);	/* an empty window: NPU_EINVAL */
	} else {
		e = NPU_ENOMEM;
	}
	ocl_release(o, m, 2);
	return e;
}
