// SPDX-License-Identifier: MIT
/*
 * test_registry - libnpu's registries have no holes: every kernel kind has
 * its one line in kernel.c's registry with every piece (a name, a cost,
 * an NPU command or an IR op of its own) and a CPU reference (ref_kern.c),
 * and every N-dimensional IR op finds its kernel, its tensors in the
 * kernel's order.
 * A kind added to enum kern_kind without its line fails here, not by
 * running as nothing.
 */
#include <stdio.h>
#include <string.h>

#include "ir/kernel.h"
#include "ref/ref_kern.h"
#include "tap.h"

static void test_every_kind_registered(void)
{
	char why[160] = "";
	int err = kern_registry_check(why, sizeof(why));

	if (err)
		printf("#   %s\n", why);
	CHECK_EQ(err, 0);
	for (int i = 0; i < K_NUM; i++) {
		const struct kern_desc *d = kern_desc((enum kern_kind)i);

		CHECK(d && d->name && d->work);
	}
	CHECK(!kern_desc(K_NUM));
}

/* The CPU reference runs every kind: its table (ref_kern.c) has no hole. */
static void test_every_kind_has_a_reference(void)
{
	char why[160] = "";
	int err = ref_kern_check(why, sizeof(why));
	struct kern k;

	if (err)
		printf("#   %s\n", why);
	CHECK_EQ(err, 0);
	memset(&k, 0, sizeof(k));
	k.kind = K_NUM;
	CHECK_EQ(ref_kern_run(&k, NULL, 0, 0, 0), NPU_EINVAL);
}

/* Each N-d kind's IR op gives it back, with its inputs then its outputs. */
static void test_nd_ops_find_their_kernel(void)
{
	for (int i = 0; i < K_NUM; i++) {
		const struct kern_desc *d = kern_desc((enum kern_kind)i);
		struct ir_node n;
		struct kern k;

		if (!d->nin)
			continue;
		memset(&n, 0, sizeof(n));
		n.op = d->nd_op;
		n.nin = (uint32_t)d->nin;
		n.nout = (uint32_t)d->nout;
		for (int j = 0; j < d->nin; j++)
			n.in[j] = 10 + j;
		for (int j = 0; j < d->nout; j++)
			n.out[j] = 20 + j;
		CHECK_EQ(kern_of_nd(&n, &k), 0);
		CHECK_EQ((int)k.kind, i);
		CHECK_EQ(k.nt, d->nin + d->nout);
		CHECK(k.t[0] == 10 && k.t[d->nin] == 20);
	}
	{	/* not an N-d op: refused, never a kernel that does nothing */
		struct ir_node n;
		struct kern k;

		memset(&n, 0, sizeof(n));
		n.op = IR_CONV2D;
		CHECK_EQ(kern_of_nd(&n, &k), NPU_EINVAL);
	}
}

TAP_MAIN(TAP_ENTRY(test_every_kind_registered), TAP_ENTRY(test_every_kind_has_a_reference), TAP_ENTRY(test_nd_ops_find_their_kernel))
