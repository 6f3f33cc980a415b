/* SPDX-License-Identifier: MIT */
/*
 * common.cl - what libnpu's kernels share. Shapes and scalars come in
 * vectors by value (one argument, no buffer to fill); kernels index them
 * as arrays.
 */
#define UNPACK8(v)	{ v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7 }
#define UNPACK16(v)	{ v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7, \
			  v.s8, v.s9, v.sa, v.sb, v.sc, v.sd, v.se, v.sf }
