// SPDX-License-Identifier: MIT
/*
 * model.c - npu_model_load: a model's graph, built in two stages. The
 * importer (import/onnx.c) reads the model into the IR's own ops, with
 * ONNX's semantics and no knowledge of any command's fields; the fast
 * path pass (passes/fastpath.c) then picks the 2-D layer ops where they
 * fit. The result is the graph the caller gets, and plans of it leave it
 * as it is.
 */
#include <stdio.h>

#include "import/onnx.h"
#include "passes/fastpath.h"

/* @err from importing, or the fast paths of *@g picked: 0 or an error (no graph then). */
static int built(int err, npu_graph **g)
{
	char msg[NPU_ERRMSG_LEN];

	if (err)
		return err;
	err = fastpath_select(*g);
	if (err) {
		snprintf(msg, sizeof(msg), "%s", npu_graph_error(*g));
		npu_graph_free(*g);
		*g = NULL;
		return npu_fail(NULL, err, "npu_model_load: %s", msg);
	}
	return 0;
}

int npu_model_load_mem_v(size_t size, const void *buf, size_t len,
			 const struct npu_model_opts *opts, npu_graph **g)
{
	return built(onnx_load_mem(size, buf, len, opts, g), g);
}

int npu_model_load_v(size_t size, const char *path, const struct npu_model_opts *opts,
		     npu_graph **g)
{
	return built(onnx_load(size, path, opts, g), g);
}
