// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* npu_trace.c - where the tracepoints of npu_trace.h are defined. */
#define CREATE_TRACE_POINTS
#include "npu_trace.h"
