// SPDX-License-Identifier: MIT
/*
 * npu_resample.c - the tensor engine's N-d padding and resizing
 * (npu_cmd_nd.h, ops 38 and 39): ONNX's Pad in its three modes with crops,
 * and ONNX's Resize as separable taps from a table libnpu works out, so
 * that upsampling networks (segmentation, detection necks) and padded
 * ones stay on the NPU.
 *
 * As in npu_nd.c, every field is checked before anything is allocated,
 * the buffers are charged to the command and the loops look for a stop
 * every NPU_ND_STOP_EVERY elements (padding) or NPU_ENG_WORK_CHECK units
 * of work (resize, whose outputs differ in taps).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_train_math.h"
#include "npu_tensor_priv.h"

/*
 * @rank dims at @c (1..NPU_TENSOR_MAX_DIM, zero past the rank) into @d;
 * false when one is not, or their product of @esz-byte elements passes
 * NPU_TENSOR_MAX_BYTES. Their product in *@count.
 */
static bool rd_dims(const uint8_t *c, uint32_t rank, uint32_t esz, uint32_t *d,
		    uint64_t *count)
{
	*count = 1;
	for (uint32_t i = 0; i < NPU_ND_MAX_RANK; i++) {
		d[i] = npu_rd32(c + 4 * i);
		if (i >= rank ? d[i] != 0 : !npu_dim_ok(d[i]))
			return false;
		if (i < rank)
			*count *= d[i];
		if (*count * esz > NPU_TENSOR_MAX_BYTES)
			return false;
	}
	return true;
}

/* The next index of an odometer over @d (@rank dims, the last fastest). */
static void next_index(uint32_t rank, const uint32_t *d, int64_t *c)
{
	for (int i = (int)rank - 1; i >= 0; i--) {
		if (++c[i] < d[i])
			return;
		c[i] = 0;
	}
}

/* The input read into *@x, and a buffer *@y for the output, both charged to the command. */
static uint32_t load_and_alloc(struct npu_core *core, uint64_t in_va, uint64_t in_bytes,
			       uint8_t **x, uint64_t out_bytes, uint8_t **y, uint64_t *fault)
{
	uint32_t st = npu_nd_load(core, in_va, in_bytes, (void **)x, fault);

	if (st != NPU_JOB_OK)
		return st;
	*y = npu_eng_alloc(core, out_bytes);
	return *y ? NPU_JOB_OK : NPU_JOB_INVALID_CMD;
}

/* ---- NPU_CMD_PAD_ND ------------------------------------------------------------ */

/* The input index that output index @o of a dim of @n reads, or -1 for the constant. */
static int64_t pad_src(uint32_t mode, int64_t o, int32_t before, int64_t n)
{
	int64_t i = o - before, period, m;

	if (i >= 0 && i < n)
		return i;
	if (mode == NPU_PADM_CONSTANT)
		return -1;
	if (mode == NPU_PADM_EDGE)
		return i < 0 ? 0 : n - 1;
	if (n == 1)
		return 0;
	period = 2 * n - 2;	/* reflect: the edge is not repeated */
	m = ((i % period) + period) % period;
	return m < n ? m : period - m;
}

uint32_t npu_pad_nd_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16), value = npu_rd64(c + 40);
	uint32_t rank = npu_rd32(c + 24), mode = npu_rd32(c + 28), esz = npu_rd32(c + 32);
	uint32_t in[NPU_ND_MAX_RANK], out[NPU_ND_MAX_RANK], st;
	int32_t before[NPU_ND_MAX_RANK];
	int64_t idx[NPU_ND_MAX_RANK] = { 0 };
	uint64_t nin, nout;
	uint8_t *x = NULL, *y = NULL;

	if (size != sizeof(struct npu_cmd_pad_nd))
		return NPU_JOB_INVALID_CMD;
	if (!npu_in_range(rank, 1, NPU_ND_MAX_RANK) ||
	    !npu_in_range(mode, NPU_PADM_CONSTANT, NPU_PADM_EDGE) ||
	    (esz != 1 && esz != 4 && esz != 8) || npu_rd32(c + 36) ||
	    (esz < 8 && value >> (8 * esz)) || (in_va | out_va) % esz ||
	    !rd_dims(c + 48, rank, esz, in, &nin) || !rd_dims(c + 72, rank, esz, out, &nout))
		return NPU_JOB_INVALID_CMD;
	for (uint32_t d = 0; d < NPU_ND_MAX_RANK; d++) {
		before[d] = (int32_t)npu_rd32(c + 96 + 4 * d);
		if (d >= rank ? before[d] != 0 :
		    before[d] < -(int32_t)NPU_TENSOR_MAX_DIM || before[d] > (int32_t)NPU_TENSOR_MAX_DIM)
			return NPU_JOB_INVALID_CMD;
	}
	st = load_and_alloc(core, in_va, nin * esz, &x, nout * esz, &y, fault);
	if (st != NPU_JOB_OK)
		goto out;
	for (uint64_t o = 0; o < nout; o++, next_index(rank, out, idx)) {
		uint64_t off = 0;
		bool inside = true;

		if (npu_nd_stop(core, o)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint32_t d = 0; d < rank; d++) {
			int64_t s = pad_src(mode, idx[d], before[d], in[d]);

			inside &= s >= 0;
			off = off * in[d] + (uint64_t)(s < 0 ? 0 : s);
		}
		memcpy(y + o * esz, inside ? x + off * esz : (const uint8_t *)&value, esz);
	}
	st = npu_nd_store(core, out_va, y, nout * esz, fault);
	npu_account(core, st, (nin + nout) * esz, npu_vec_cycles(core, nout, 1), bytes, cycles);
out:
	free(x);
	free(y);
	return st;
}

/* ---- NPU_CMD_RESIZE -------------------------------------------------------------- */

static uint32_t dt_size(uint32_t dt)
{
	return dt == NPU_ND_F32 || dt == NPU_ND_I32 ? 4 : dt == NPU_ND_I8 || dt == NPU_ND_U8 ? 1 : 0;
}

static double load_num(const uint8_t *x, uint32_t dt, uint64_t i)
{
	float f;
	int32_t v;

	switch (dt) {
	case NPU_ND_F32:
		memcpy(&f, x + 4 * i, 4);
		return f;
	case NPU_ND_I32:
		memcpy(&v, x + 4 * i, 4);
		return v;
	case NPU_ND_I8:
		return (int8_t)x[i];
	default:
		return x[i];
	}
}

static void store_num(uint8_t *y, uint32_t dt, uint64_t i, double v)
{
	double lo = dt == NPU_ND_I8 ? -128 : dt == NPU_ND_U8 ? 0 : -2147483648.0;
	double hi = dt == NPU_ND_I8 ? 127 : dt == NPU_ND_U8 ? 255 : 2147483647.0;
	float f = (float)v;
	int32_t q;

	if (dt == NPU_ND_F32) {
		memcpy(y + 4 * i, &f, 4);
		return;
	}
	v = nearbyint(v);	/* half to even */
	q = (int32_t)(v < lo ? lo : v > hi ? hi : v);
	if (dt == NPU_ND_I32)
		memcpy(y + 4 * i, &q, 4);
	else
		y[i] = (uint8_t)q;
}

/* Entry @t of the table, checked: false for a malformed one. */
static bool tap_ok(const struct npu_resize_tap *t)
{
	if (!npu_in_range(t->count, 1, 4) || t->outside > 1 || t->first < -(1ll << 40) ||
	    t->first > (1ll << 40))
		return false;
	for (uint32_t i = 0; i < t->count; i++)
		if (!isfinite(t->w[i]))
			return false;
	return true;
}

uint32_t npu_resize_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16), t_va = npu_rd64(c + 24);
	uint32_t rank = npu_rd32(c + 32), dt = npu_rd32(c + 36), ex_bits = npu_rd32(c + 40);
	uint32_t in[NPU_ND_MAX_RANK], out[NPU_ND_MAX_RANK], esz = dt_size(dt), st, base[NPU_ND_MAX_RANK];
	uint64_t nin, nout, ntaps = 0, istride[NPU_ND_MAX_RANK], taps = 1;
	int64_t idx[NPU_ND_MAX_RANK] = { 0 };
	struct npu_resize_tap *tab = NULL;
	uint8_t *x = NULL, *y = NULL;

	if (size != sizeof(struct npu_cmd_resize))
		return NPU_JOB_INVALID_CMD;
	if (!npu_in_range(rank, 1, NPU_ND_MAX_RANK) || !esz || npu_rd32(c + 44) ||
	    !npu_f32_bits_finite(ex_bits) || (in_va | out_va) % esz || t_va % 8 ||
	    !rd_dims(c + 48, rank, esz, in, &nin) || !rd_dims(c + 72, rank, esz, out, &nout))
		return NPU_JOB_INVALID_CMD;
	for (uint32_t d = 0; d < rank; d++) {
		base[d] = (uint32_t)ntaps;
		ntaps += out[d];
	}
	if (ntaps * sizeof(*tab) > NPU_TENSOR_MAX_BYTES)
		return NPU_JOB_INVALID_CMD;
	st = npu_nd_load(core, t_va, ntaps * sizeof(*tab), (void **)&tab, fault);
	if (st != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	for (uint32_t d = 0; d < rank; d++) {	/* every entry sane; the work bounded */
		uint32_t most = 1;

		for (uint32_t o = 0; o < out[d]; o++) {
			if (!tap_ok(&tab[base[d] + o]))
				goto out;
			most = tab[base[d] + o].count > most ? tab[base[d] + o].count : most;
		}
		taps *= most;
	}
	if (taps * nout > NPU_TENSOR_MAX_MACS)
		goto out;
	if (!npu_eng_charge_macs(core, taps * nout)) {	/* a tap each, as a MAC */
		st = NPU_JOB_LIMIT;
		goto out;
	}
	istride[rank - 1] = 1;
	for (uint32_t d = rank - 1; d > 0; d--)
		istride[d - 1] = istride[d] * in[d];
	st = load_and_alloc(core, in_va, nin * esz, &x, nout * esz, &y, fault);
	if (st != NPU_JOB_OK)
		goto out;
	for (uint64_t o = 0; o < nout; o++, next_index(rank, out, idx)) {
		const struct npu_resize_tap *tp[NPU_ND_MAX_RANK];
		uint32_t t[NPU_ND_MAX_RANK] = { 0 };
		bool outside = false;
		double acc = 0;

		if (npu_eng_work(core, 8 * taps + 8)) {	/* up to @taps combinations */
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint32_t d = 0; d < rank; d++) {
			tp[d] = &tab[base[d] + idx[d]];
			outside |= tp[d]->outside;
		}
		if (outside)
			acc = npu_f32_from_bits(ex_bits);
		for (int d = 0; !outside && d >= 0;) {	/* every combination of the taps */
			double wt = 1;
			uint64_t off = 0;

			for (d = 0; d < (int)rank; d++) {
				int64_t i = tp[d]->first + t[d];

				i = i < 0 ? 0 : i >= in[d] ? in[d] - 1 : i;
				off += (uint64_t)i * istride[d];
				wt *= tp[d]->w[t[d]];
			}
			if (wt != 0)
				acc += wt * load_num(x, dt, off);
			for (d = (int)rank - 1; d >= 0; d--) {
				if (++t[d] < tp[d]->count)
					break;
				t[d] = 0;
			}
		}
		store_num(y, dt, o, acc);
	}
	st = npu_nd_store(core, out_va, y, nout * esz, fault);
	npu_account(core, st, (nin + nout) * esz + ntaps * sizeof(*tab),
		    npu_vec_cycles(core, nout * taps, 2), bytes, cycles);
out:
	free(tab);
	free(x);
	free(y);
	return st;
}
