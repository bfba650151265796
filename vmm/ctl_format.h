/* SPDX-License-Identifier: MIT */
/* Human-readable output of QMP replies, shared by `capvisor ctl` and `capvisor top`. */
#ifndef CAPVISOR_CTL_FORMAT_H
#define CAPVISOR_CTL_FORMAT_H

#include <stdio.h>

#include <json-c/json.h>

/* The reply of CMD: a table for the queries, "ok" for changes, pretty JSON otherwise. */
void ctl_print_reply(FILE *f, const char *cmd, json_object *ret);
/* The query-host reply as two tables (clusters, pCPUs). */
void ctl_print_host(FILE *f, json_object *host);
/*
 * The query-vcpus reply as a table; share[i] (percent of one pCPU over the
 * last interval, NAN when unknown) adds a SHARE column when share != NULL.
 */
void ctl_print_vcpus(FILE *f, json_object *vcpus, const double *share);

#endif
