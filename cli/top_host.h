/* SPDX-License-Identifier: MIT */
/* capvisor top against a capvisor host: every VM and its vCPUs (cli/top_host.c). */
#ifndef CAPVISOR_TOP_HOST_H
#define CAPVISOR_TOP_HOST_H

#include <stdbool.h>

struct qmp_conn;
struct top_host;

struct top_host *top_host_new(void);
void top_host_free(struct top_host *th);
/*
 * One frame to stdout: 0; 1 when the host went away (a normal end); -1 on
 * any other failure with its exit status (enum ctl_exit) in *status.
 */
int top_host_frame(struct top_host *th, struct qmp_conn *c, long frame, bool tty_in,
		   bool tty_out, int *status);

#endif
