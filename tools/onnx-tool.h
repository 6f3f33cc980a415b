/* SPDX-License-Identifier: MIT */
/*
 * onnx-tool.h - what npu-run and npu-onnx-test share: choosing a backend
 * from the command line, binding ONNX TensorProto files to a model's
 * inputs, running a plan and comparing outputs.
 */
#ifndef NPU_ONNX_TOOL_H
#define NPU_ONNX_TOOL_H

#include <stddef.h>

#include "npu.h"

/* "auto", "npu", "opencl" or "cpu" into *@b; 0, or -1 for another word. */
int tool_backend(const char *name, enum npu_backend *b);

/*
 * A compiled model: the graph loaded with @fixed as its fixed values, the
 * device opened when the backend may use the NPU, the plan. 0, or an
 * npu_error with the message in @why.
 */
struct tool_model {
	npu_device *dev;
	npu_graph *g;
	npu_plan *plan;
};
int tool_load(struct tool_model *m, const char *path, const struct npu_array *fixed,
	      unsigned int nfixed, enum npu_backend b, int strict, char *why, size_t len);
void tool_unload(struct tool_model *m);

/*
 * Bind the arrays @in (@nin of them) to the graph's inputs, by name, or by
 * position when an array has no name: *@bound, one pointer per input of
 * the graph however many it has (allocated here, free() it). 0, or an
 * error with the message in @why.
 */
int tool_bind(struct tool_model *m, const struct npu_array *in, unsigned int nin,
	      const void ***bound, char *why, size_t len);
/*
 * The graph's outputs: *@out (npu_graph_io_array shapes, one per output)
 * and *@ptrs their data pointers, both allocated here, however many there are.
 */
int tool_outputs(struct tool_model *m, struct npu_array **out, void ***ptrs, unsigned int *nout);

/*
 * Whether @got matches @want: same dtype and shape, integers exactly,
 * floats within 1e-5 + 1e-3 * |want| (NaN matches NaN). 1, or 0 with the
 * first difference in @why.
 */
int tool_compare(const struct npu_array *got, const struct npu_array *want, char *why,
		 size_t len);

#endif /* NPU_ONNX_TOOL_H */
