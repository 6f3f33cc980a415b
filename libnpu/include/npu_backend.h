/* SPDX-License-Identifier: MIT */
/*
 * npu_backend.h - the backend interface of libnpu: what the NPU, OpenCL
 * and CPU backends implement, and what an application implements to add
 * its own (a new device, or custom ops). Included by npu.h; see
 * Documentation/libnpu.rst, "Writing a backend".
 *
 * A backend is a table of functions. When a graph is compiled, libnpu
 * opens every registered backend for the plan, asks each to claim every
 * node (with a cost and a reason), places the nodes where the total cost
 * with the crossings between backends is least, and asks each backend to
 * compile its partitions (maximal runs of consecutive nodes placed on it).
 * A run executes the partitions in order; a backend signals a fence when
 * a partition is done, and libnpu waits on it before another backend uses
 * what it wrote. Tensors live in host memory: a backend that works there
 * (NPU_BACKEND_F_HOST_MEMORY) reads and writes it in place; any other
 * imports it into buffers of its own and copies at the boundaries.
 */
#ifndef NPU_BACKEND_H
#define NPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a backend answers when asked to claim a node. */
struct npu_claim {
	double cost_ns;		/* estimated time of the node there, in ns */
	char reason[96];	/* why it can run it, or why not */
};

/** What a backend instance is opened for: one plan. */
struct npu_backend_env {
	npu_device *dev;	/* the plan's NPU, or NULL */
	const npu_graph *graph;
	const void *internal;	/* libnpu's own backends only */
	/*
	 * Per tensor id: nonzero for a constant, or a tensor computed from
	 * constants when the plan was compiled (folded). It changes only when
	 * the host writes a constant (npu_run_args.consts_written says), or,
	 * for a trained weight (npu_graph_param), at each training step.
	 */
	const unsigned char *fixed;
};

/** A run of a partition: every tensor's storage, by tensor id. */
struct npu_run_args {
	const npu_graph *graph;
	void *const *host;	/* host storage (views point into their root's) */
	void *const *mem;	/* this backend's buffers (alloc or import), or NULL */
	uint32_t train_step;	/* training runs of the plan so far, this one included */
	float lr;		/* the optimizer's learning rate now (npu_plan_set_lr) */
	int lr_set;		/* whether lr replaces the graph's */
	int train;		/* a training run */
	uint64_t *cycles;	/* add the modeled device cycles here */
	/*
	 * Changes whenever the host writes a constant (npu_plan_write) or the
	 * plan computes a folded one again: a backend that keeps a constant
	 * transformed (weights packed for its kernels) redoes it then.
	 */
	uint64_t consts_written;
};

/** Flags of struct npu_backend_ops. */
enum {
	NPU_BACKEND_F_HOST_MEMORY = 1 << 0,	/* runs on host memory in place: no copies */
	NPU_BACKEND_F_DEVICE = 1 << 1,		/* runs only in a plan for an npu_device */
};

/**
 * struct npu_backend_ops - a backend.
 * @name: short, lower case, unique; what reports and NPU_BACKEND use.
 * @title: for people ("OpenCL"); NULL: @name.
 * @unit: what one partition's submission is called ("job"); NULL: "run".
 * @flags: NPU_BACKEND_F_*.
 * @open: make an instance for a plan (*@be); NPU_ENODEV with @why when
 *	the backend cannot run here (no device). Optional.
 * @close: free the instance.
 * @describe: a line about the instance for the report, or NULL.
 * @claim: whether the backend runs node @node of @env's graph: 1 (with
 *	its cost) or 0 (with the reason in @c->reason).
 * @compile: prepare partition @nodes (@count, in order) into *@exe.
 * @alloc: storage both the host and the backend address (*@host, *@mem):
 *	plans allocate their tensors there. Optional.
 * @import: a buffer of the backend's for host storage @host. Optional
 *	(NULL for a host-memory backend).
 * @copy: make @mem current from @host (@to_host 0) or @host from @mem.
 * @free_mem: free what @alloc or @import returned.
 * @execute: run partition @exe; *@signal gets a fence that @wait takes.
 * @wait: wait until @fence has signalled; returns the work's outcome.
 * @release: free a compiled partition.
 * @launch_ns: what starting one more partition on this backend costs (a
 *	submission and its completion: an NPU job, an OpenCL flush), charged
 *	by placement to each change of backend into it; 0: nothing.
 * @fence_fd: a new file descriptor that polls readable once @fence has
 *	signalled (npu_plan_fence_fd), or a negative error. Optional (2.4).
 */
struct npu_backend_ops {
	const char *name;
	const char *title;
	const char *unit;
	unsigned int flags;
	int (*open)(void *ctx, const struct npu_backend_env *env, void **be, char *why,
		    size_t len);
	void (*close)(void *be);
	const char *(*describe)(void *be);
	int (*claim)(void *be, int node, struct npu_claim *c);
	int (*compile)(void *be, const int *nodes, uint32_t count, void **exe, char *why,
		       size_t len);
	int (*alloc)(void *be, size_t bytes, void **host, void **mem);
	int (*import)(void *be, void *host, size_t bytes, void **mem);
	int (*copy)(void *be, void *mem, void *host, size_t bytes, int to_host);
	void (*free_mem)(void *be, void *mem);
	int (*execute)(void *be, void *exe, const struct npu_run_args *args, uint64_t *signal);
	int (*wait)(void *be, uint64_t fence);
	void (*release)(void *be, void *exe);
	double launch_ns;
	int (*fence_fd)(void *be, uint64_t fence);
};

/**
 * Register a backend for the compiles that follow; @ctx is passed to its
 * @open. An application's backends are asked after the NPU and OpenCL and
 * before the CPU reference. NPU_EBUSY for a name already registered.
 * The table must stay valid until npu_backend_unregister.
 */
int npu_backend_register_v(size_t size, const struct npu_backend_ops *ops, void *ctx);
#define npu_backend_register(...) \
	npu_backend_register_v(sizeof(struct npu_backend_ops), __VA_ARGS__)
/** Remove a backend an application registered (plans made with it keep it). */
int npu_backend_unregister(const char *name);

/** What a node is, for a backend's claim and compile. */
struct npu_node_info {
	const char *op;		/* the op (a custom op: its name) */
	const char *label;	/* the name reports give it */
	uint32_t ninputs, noutputs;
	const int *inputs, *outputs;	/* tensor ids, -1: absent */
	const void *attr;	/* a custom op's attributes */
	size_t attr_len;
	int training;		/* runs only when training */
};

int npu_graph_node_count(const npu_graph *g);
int npu_graph_tensor_count(const npu_graph *g);
int npu_graph_node_info_v(size_t size, const npu_graph *g, int node, struct npu_node_info *info);
#define npu_graph_node_info(...) npu_graph_node_info_v(sizeof(struct npu_node_info), __VA_ARGS__)
/** A tensor's description (data and channel_scales point into the graph). */
int npu_graph_tensor_info_v(size_t size, const npu_graph *g, int id, struct npu_tensor_desc *d);
#define npu_graph_tensor_info(...) \
	npu_graph_tensor_info_v(sizeof(struct npu_tensor_desc), __VA_ARGS__)

/**
 * Add a custom op @op: a backend that claims it runs it. @attr (@attr_len
 * bytes, copied) is for that backend to read. No backend claiming it makes
 * the compile fail, naming the op.
 */
int npu_graph_custom(npu_graph *g, const char *op, const int *ins, uint32_t nin,
		     const int *outs, uint32_t nout, const void *attr, size_t attr_len);

#ifdef __cplusplus
}
#endif

#endif /* NPU_BACKEND_H */
