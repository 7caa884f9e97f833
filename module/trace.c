// SPDX-License-Identifier: GPL-2.0
/*
 * Defines the tracepoints of trace.h (rcvfix:rcvbuf_set): the one file
 * that includes it with CREATE_TRACE_POINTS.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
