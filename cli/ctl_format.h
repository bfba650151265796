/* SPDX-License-Identifier: MIT */
/* Human-readable output of QMP replies, shared by `capvisor ctl` and `capvisor top`. */
#ifndef CAPVISOR_CTL_FORMAT_H
#define CAPVISOR_CTL_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/*
 * Whether RET has the shape the printers need for CMD's reply: 0, or -1 with
 * the member that is wrong and what was expected in err. Replies of other
 * commands are printed as JSON and always pass.
 */
int ctl_check_reply(const char *cmd, json_object *ret, char *err, size_t len);
/* The checked reply of CMD: a table for the queries, "ok" for changes, pretty JSON otherwise. */
void ctl_print_reply(FILE *f, const char *cmd, json_object *ret);
/* The checked query-host reply as two tables (clusters, pCPUs). */
void ctl_print_host(FILE *f, json_object *host);
/*
 * The checked query-vcpus reply as a table; share[i] (percent of one pCPU over the
 * last interval, NAN when unknown) adds a SHARE column when share != NULL.
 */
void ctl_print_vcpus(FILE *f, json_object *vcpus, const double *share);
/*
 * The checked query-groups reply as a table; with share (the vCPUs' shares as
 * for ctl_print_vcpus, nr_share of them) a SHARE column sums each group's.
 */
void ctl_print_groups(FILE *f, json_object *groups, const double *share, size_t nr_share);
/*
 * A capvisor host's checked query-vms reply as a table; with share (percent
 * of one pCPU, NAN unknown) and misses (deadline misses), one per VM, a
 * SHARE and a MISSES column.
 */
void ctl_print_vms(FILE *f, json_object *vms, const double *share, const uint64_t *misses);

#endif
