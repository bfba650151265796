// SPDX-License-Identifier: MIT
/*
 * Stop signals as bytes on a pipe (util/stopsig.h): a handler writes each
 * signal's number, the event loop reads it.
 */
#include "util/stopsig.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* The write end, for the handler: one set of stop signals per process. */
static volatile int stopsig_wfd = -1;

static void on_stop_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	/* A full pipe drops the byte: the signals already in it stop us all the same. */
	if (write(stopsig_wfd, &b, 1) < 0)
		b = 0;
	errno = saved;
}

int stop_signals_open(struct stop_signals *s, const int *signo, unsigned int n)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };
	int p[2];

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (n > STOPSIG_MAX || stopsig_wfd >= 0)
		return -EINVAL;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	s->fd = p[0];
	stopsig_wfd = p[1];
	sigemptyset(&s->set);
	for (unsigned int i = 0; i < n; i++)
		sigaddset(&s->set, signo[i]);
	sa.sa_mask = s->set;	/* one handler at a time */
	pthread_sigmask(SIG_BLOCK, &s->set, &s->old_mask);
	for (s->n = 0; s->n < n; s->n++) {
		s->signo[s->n] = signo[s->n];
		if (sigaction(signo[s->n], &sa, &s->old[s->n])) {
			int rc = -errno;

			stop_signals_close(s);
			return rc;
		}
	}
	return 0;
}

void stop_signals_unblock(struct stop_signals *s)
{
	pthread_sigmask(SIG_UNBLOCK, &s->set, NULL);
}

int stop_signals_next(struct stop_signals *s)
{
	unsigned char b;

	return s->fd >= 0 && read(s->fd, &b, 1) == 1 ? b : 0;
}

void stop_signals_close(struct stop_signals *s)
{
	int wfd = stopsig_wfd;

	if (s->fd < 0)
		return;
	pthread_sigmask(SIG_BLOCK, &s->set, NULL);
	for (unsigned int i = 0; i < s->n; i++)
		sigaction(s->signo[i], &s->old[i], NULL);
	pthread_sigmask(SIG_SETMASK, &s->old_mask, NULL);
	stopsig_wfd = -1;
	close(wfd);
	close(s->fd);
	s->fd = -1;
}
