/* SPDX-License-Identifier: MIT */
/*
 * common.cl - what libnpu's kernels share. Shapes and scalars come in
 * vectors by value (one argument, no buffer to fill); kernels index them
 * as arrays.
 */
#define UNPACK8(v)	{ v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7 }
#define UNPACK16(v)	{ v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7, \
			  v.s8, v.s9, v.sa, v.sb, v.sc, v.sd, v.se, v.sf }

/*
 * A kernel @name that packs a dense filter of @T, w [out_c][k_h][k_w][in_c],
 * for the blocked convolutions (conv2d_f32_fwd8, conv2d_i8_blk) as
 * [k_h * k_w][out_c / 8][in_c][8]: a work-item reads a tap's weights for
 * its 8 channels in one sequential run. Channels past out_c (the last
 * block's) repeat the last one; their outputs are not stored. @count:
 * taps * ceil(out_c / 8) * in_c * 8.
 */
#define CONV_W_PACK(name, T)								\
kernel void name(global const T *w, global T *t, uint out_c, uint taps, uint in_c,	\
		 ulong count)								\
{											\
	size_t e = get_global_id(0), r = e / 8 / in_c;					\
	uint ocb = (out_c + 7) / 8, i = (e / 8) % in_c;					\
											\
	if (e < count) {								\
		uint oc = min((uint)(r % ocb) * 8 + (uint)(e % 8), out_c - 1);		\
											\
		t[e] = w[((size_t)oc * taps + r / ocb) * in_c + i];			\
	}										\
}
