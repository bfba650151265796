// SPDX-License-Identifier: MIT
/*
 * The helper that removes the control socket for a VMM that switched to an
 * unprivileged user, or the host's cgroup directory after it dropped
 * CAP_DAC_OVERRIDE (see util/path_reaper.h for why it exists).
 */
#include "util/path_reaper.h"
#include "util/util.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Keep only what unlinking in someone else's directory needs. */
static void helper_drop_privs(void)
{
	capng_clear(CAPNG_SELECT_BOTH);
	capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_DAC_OVERRIDE);
	capng_apply(CAPNG_SELECT_BOTH);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static void __attribute__((noreturn)) helper_main(int rfd, const char *path, dev_t dev, ino_t ino)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	struct stat st;
	sigset_t all;
	char byte;

	/* A ^C on the terminal reaches the whole process group: outlive the VMM. */
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_NAME, "capvisor-reaper", 0, 0, 0);
	/* Nothing of the VM (KVM fds, the socket, the console) stays open here. */
	if (rfd != 3 && dup2(rfd, 3) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 4, ~0U, 0) < 0)	/* before Linux 5.9: one by one */
		for (int fd = 4; fd < 4096; fd++)
			close(fd);
	close(STDIN_FILENO);	/* nor does it keep a caller's pipes open */
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	helper_drop_privs();
	while (read(3, &byte, 1) < 0 && errno == EINTR)
		;
	if (lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino) {
		if (S_ISDIR(st.st_mode))
			rmdir(path);
		else
			unlink(path);
	}
	_exit(0);
}

int path_reaper_start(struct path_reaper *r, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int p[2];
	pid_t pid;

	r->pid = 0;
	r->fd = -1;
	if (lstat(path, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[1]);
		helper_main(p[0], path, st.st_dev, st.st_ino);
	}
	close(p[0]);
	r->pid = pid;
	r->fd = p[1];
	return 0;
}

void path_reaper_finish(struct path_reaper *r)
{
	char byte = 1;

	if (r->pid <= 0)
		return;
	if (write(r->fd, &byte, 1) < 0) {
		/* EOF below tells it the same. */
	}
	close(r->fd);
	while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	r->pid = 0;
	r->fd = -1;
}
