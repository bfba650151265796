/* SPDX-License-Identifier: MIT */
/*
 * Removing a file we created at exit, after `--user` took away the right to.
 *
 * The control socket is bound as root, in a directory the user capvisor
 * switches to may not write, so the unprivileged VMM cannot unlink it at
 * exit. Before dropping privileges, path_reaper_start() forks a small
 * helper that keeps only CAP_DAC_OVERRIDE, closes everything else and
 * waits on a pipe. path_reaper_finish() tells it to remove the file and
 * waits for it, so the file is gone when capvisor exits; if capvisor dies
 * instead, the pipe's EOF tells it the same. It removes the file only if it
 * is still the one we created (same device and inode).
 *
 * The same for a directory, removed if empty: capvisor host makes its
 * cgroup directory in a cgroup root only root may write (mode 555 with
 * cgroup v1's cpu controller here), then keeps only CAP_KILL and
 * CAP_SYS_NICE, so it could not remove it at exit.
 */
#ifndef CAPVISOR_PATH_REAPER_H
#define CAPVISOR_PATH_REAPER_H

#include <stddef.h>
#include <sys/types.h>

struct path_reaper {
	pid_t pid;		/* 0: not started */
	int fd;			/* write end of the pipe */
};

/* 0, or -1 with err filled. path (a file, or a directory) must exist (we just created it). */
int path_reaper_start(struct path_reaper *r, const char *path, char *err, size_t errlen);
/* Remove the file now and wait for the helper. Safe on a reaper never started. */
void path_reaper_finish(struct path_reaper *r);

#endif
