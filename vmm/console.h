/* SPDX-License-Identifier: MIT */
/*
 * The console behind COM1: output to stdout or a file; with stdio, input from
 * stdin through the event loop, the terminal in raw mode (no echo, no line
 * buffering; ^C still stops capvisor) and restored on exit and on fatal
 * signals.
 */
#ifndef CAPVISOR_CONSOLE_H
#define CAPVISOR_CONSOLE_H

#include <stdbool.h>

struct vm;
struct vm_config;

struct console {
	int out_fd;
	bool own_out;		/* out_fd is a file we opened */
	bool in_attached;	/* stdin is on the VM's event loop */
	struct vm *vm;
};

void console_init(struct console *c);
/* Open the output; -errno with a message naming --console. */
int console_open(struct console *c, const struct vm_config *cfg);
/* Feed stdin to the VM's COM1 (stdio console only); raw mode if stdin is a tty. */
void console_attach(struct console *c, struct vm *vm);
/* Restore the terminal, detach stdin, close the output file. Idempotent. */
void console_close(struct console *c);

#endif
