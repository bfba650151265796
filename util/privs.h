/* SPDX-License-Identifier: MIT */
/*
 * Dropping privileges once setup is done (libcap-ng).
 *
 * capvisor needs root-ish rights only while it sets up: opening /dev/kvm and
 * the api socket, mapping guest memory, pinning threads. Afterwards it keeps
 * only what a chosen feature still needs at run time:
 *   - CAP_SYS_NICE, when vCPU threads use host real-time/deadline policies
 *     (`--sched host`): sched_setattr(SCHED_DEADLINE/FIFO) and changing
 *     other threads' affinity need it for as long as the VM runs;
 *   - CAP_KILL and CAP_SYS_NICE in `capvisor host`: it signals (kicks) and
 *     pins the vCPU threads of VM processes that may run as other users;
 *   - nothing otherwise.
 * The bounding and ambient sets are cleared too, so nothing can be regained
 * through exec, and `--user NAME` switches uid/gid (supplementary groups
 * reset to NAME's) while keeping exactly the capabilities above.
 *
 * Linux capabilities are per thread: call privs_drop() on the main thread
 * before any other thread exists (threads created later inherit the reduced
 * sets). It refuses to run in a multi-threaded process rather than leave
 * privileged threads behind.
 */
#ifndef CAPVISOR_PRIVS_H
#define CAPVISOR_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

struct privs_opts {
	bool keep_sys_nice;	/* host SCHED_DEADLINE/FIFO for vCPU threads; capvisor host's pinning */
	bool keep_kill;		/* capvisor host: kicks to other users' VM threads */
	const char *user;	/* switch to this user, or NULL to stay */
};

/* 0, or -1 with the reason in err (naming the step that failed). */
int privs_drop(const struct privs_opts *opts, char *err, size_t errlen);

/* Number of threads of this process (from /proc/self/task), -1 if unknown. */
int privs_nr_threads(void);

#endif
