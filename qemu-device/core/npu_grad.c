// SPDX-License-Identifier: MIT
/*
 * npu_grad.c - the tensor engine's gradients of the N-d ops
 * (npu_cmd_train.h, ops 35 to 37): softmax's, layer normalisation's and
 * the activations', for training networks built of the N-d commands (a
 * transformer's attention, normalisation and MLP).
 *
 * As in npu_nd.c, every field is checked before anything is allocated,
 * the buffers are charged to the command and the loops look for a stop
 * every NPU_ND_STOP_EVERY elements (within a row too).
 */
#include <math.h>
#include <stdlib.h>

#include "npu_cmd.h"
#include "npu_elemfn_eval.h"
#include "npu_train_math.h"
#include "npu_tensor_priv.h"

/* ---- NPU_CMD_SOFTMAX_BWD ----------------------------------------------------- */

uint32_t npu_softmax_bwd_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			     uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t y_va = npu_rd64(c + 8), dy_va = npu_rd64(c + 16), dx_va = npu_rd64(c + 24), total;
	uint32_t outer = npu_rd32(c + 32), axis = npu_rd32(c + 36), inner = npu_rd32(c + 40);
	uint32_t flags = npu_rd32(c + 44), st;
	bool lg = flags & NPU_SOFTMAX_LOG;
	float *y = NULL, *dy = NULL;

	if (size != sizeof(struct npu_cmd_softmax_bwd))
		return NPU_JOB_INVALID_CMD;
	if (!outer || !axis || !inner || !npu_prod4(outer, axis, inner, 1, NPU_MAX_F32, &total) ||
	    (flags & ~NPU_SOFTMAX_LOG) || (y_va | dy_va | dx_va) & 3)
		return NPU_JOB_INVALID_CMD;
	if ((st = npu_nd_load(core, y_va, 4 * total, (void **)&y, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, dy_va, 4 * total, (void **)&dy, fault)) != NPU_JOB_OK)
		goto out;
	for (uint64_t r = 0; r < (uint64_t)outer * inner; r++) {
		uint64_t base = r / inner * axis * inner + r % inner;
		double sum = 0;

		/* A row may be long (axis up to the element limit): checked within. */
		for (uint32_t a = 0; a < axis; a++) {
			uint64_t i = base + (uint64_t)a * inner;

			if (npu_nd_stop(core, a)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
			sum += lg ? (double)dy[i] : (double)dy[i] * y[i];
		}
		for (uint32_t a = 0; a < axis; a++) {	/* dx over dy, in place */
			uint64_t i = base + (uint64_t)a * inner;

			if (npu_nd_stop(core, a)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
			dy[i] = (float)(lg ? dy[i] - exp((double)y[i]) * sum :
					 (double)y[i] * ((double)dy[i] - sum));
		}
	}
	st = npu_nd_store(core, dx_va, dy, 4 * total, fault);
	npu_account(core, st, 12 * total, npu_vec_cycles(core, total, 4), bytes, cycles);
out:
	free(y);
	free(dy);
	return st;
}

/* ---- NPU_CMD_NORM_BWD --------------------------------------------------------- */

uint32_t npu_norm_bwd_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			  uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va[8], total;		/* x, scale, mean, inv_std, dy, dx, dscale, dbias */
	uint32_t rows = npu_rd32(c + 72), norm = npu_rd32(c + 76), st;
	float *x = NULL, *scale = NULL, *mean = NULL, *inv = NULL, *dy = NULL, *dp = NULL;
	double *acc = NULL;

	if (size != sizeof(struct npu_cmd_norm_bwd))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 8; i++)
		va[i] = npu_rd64(c + 8 + 8 * i);
	if (!rows || !npu_dim_ok(norm) || !npu_prod4(rows, norm, 1, 1, NPU_MAX_F32, &total) ||
	    npu_rd32(c + 80) || npu_rd32(c + 84) || !(va[5] | va[6] | va[7]) ||
	    !va[0] || !va[1] || !va[2] || !va[3] || !va[4] ||
	    (va[0] | va[1] | va[2] | va[3] | va[4] | va[5] | va[6] | va[7]) & 3)
		return NPU_JOB_INVALID_CMD;
	if ((st = npu_nd_load(core, va[0], 4 * total, (void **)&x, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, va[1], 4ull * norm, (void **)&scale, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, va[2], 4ull * rows, (void **)&mean, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, va[3], 4ull * rows, (void **)&inv, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, va[4], 4 * total, (void **)&dy, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	acc = npu_eng_alloc(core, 16ull * norm);	/* dscale's and dbias's sums */
	dp = npu_eng_alloc(core, 8ull * norm);		/* the parameters' gradients, fp32 */
	if (!acc || !dp)
		goto out;
	for (uint64_t i = 0; i < 2ull * norm; i++)
		acc[i] = 0;
	for (uint32_t r = 0; r < rows; r++) {
		float *xr = x + (uint64_t)r * norm, *g = dy + (uint64_t)r * norm;
		double m = mean[r], s = inv[r], mg = 0, mgx = 0;

		if (npu_eng_stop(core)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint32_t i = 0; i < norm; i++) {
			double xh = ((double)xr[i] - m) * s;

			acc[i] += (double)g[i] * xh;
			acc[norm + i] += g[i];
			mg += (double)g[i] * scale[i];
			mgx += (double)g[i] * scale[i] * xh;
		}
		mg /= norm;
		mgx /= norm;
		for (uint32_t i = 0; i < norm; i++) {	/* dx over dy, in place */
			double xh = ((double)xr[i] - m) * s;

			g[i] = (float)(s * ((double)g[i] * scale[i] - mg - xh * mgx));
		}
	}
	for (uint64_t i = 0; i < 2ull * norm; i++)
		dp[i] = (float)acc[i];
	st = NPU_JOB_OK;
	if (va[5])
		st = npu_nd_store(core, va[5], dy, 4 * total, fault);
	if (st == NPU_JOB_OK && va[6])
		st = npu_nd_store(core, va[6], dp, 4ull * norm, fault);
	if (st == NPU_JOB_OK && va[7])
		st = npu_nd_store(core, va[7], dp + norm, 4ull * norm, fault);
	npu_account(core, st, 12 * total + 16ull * rows + 12ull * norm,
		    npu_vec_cycles(core, total, 10), bytes, cycles);
out:
	free(x);
	free(scale);
	free(mean);
	free(inv);
	free(dy);
	free(acc);
	free(dp);
	return st;
}

/* ---- NPU_CMD_ACT_BWD ---------------------------------------------------------- */

uint32_t npu_act_bwd_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			 uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t x_va = npu_rd64(c + 8), dy_va = npu_rd64(c + 16), dx_va = npu_rd64(c + 24);
	uint32_t count = npu_rd32(c + 32), fn = npu_rd32(c + 36), prm[4], st;
	float *x = NULL, *dy = NULL;
	float p[4];

	if (size != sizeof(struct npu_cmd_act_bwd))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 4; i++) {
		prm[i] = npu_rd32(c + 40 + 4 * i);
		p[i] = npu_f32_from_bits(prm[i]);
		if (!(npu_actfn_params(fn) >> i & 1) ? prm[i] != 0 : !npu_f32_bits_finite(prm[i]))
			return NPU_JOB_INVALID_CMD;	/* unused ones 0, used ones finite */
	}
	if (!count || count > NPU_MAX_F32 || !npu_actfn_has_grad(fn) ||
	    (fn == NPU_ACTFN_CLIP && !(p[2] <= p[3])) || (x_va | dy_va | dx_va) & 3)
		return NPU_JOB_INVALID_CMD;
	if ((st = npu_nd_load(core, x_va, 4ull * count, (void **)&x, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, dy_va, 4ull * count, (void **)&dy, fault)) != NPU_JOB_OK)
		goto out;
	for (uint32_t i = 0; i < count; i++) {	/* dx over dy, in place */
		if (npu_nd_stop(core, i)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		dy[i] = (float)((double)dy[i] * npu_actfn_deriv(fn, x[i], p[0], p[1], p[2], p[3]));
	}
	st = npu_nd_store(core, dx_va, dy, 4ull * count, fault);
	npu_account(core, st, 12ull * count, npu_vec_cycles(core, count, 4), bytes, cycles);
out:
	free(x);
	free(dy);
	return st;
}
