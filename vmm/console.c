// SPDX-License-Identifier: MIT
/*
 * The console behind COM1 (vmm/console.h): output to stdout or a file,
 * stdin through the event loop, the terminal in raw mode and restored on
 * exit and on fatal signals.
 */
#include "vmm/console.h"
#include "devices/serial.h"
#include "util/evloop.h"
#include "util/log.h"
#include "vmm/vm_config.h"
#include "util/paths.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <termios.h>
#include <unistd.h>

/*
 * The terminal is process state, not VM state: one saved copy, so a fatal
 * signal handler can restore it with async-signal-safe tcsetattr().
 */
static struct termios saved_termios;
static volatile sig_atomic_t termios_saved;

static void restore_tty(void)
{
	if (termios_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
		termios_saved = 0;
	}
}

static void fatal_signal(int sig)
{
	restore_tty();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void enter_raw_mode(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGHUP, SIGQUIT };
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_termios) < 0)
		return;
	raw = saved_termios;
	/* Raw input, but keep ISIG so ^C stops capvisor and OPOST for our own output. */
	raw.c_iflag &= ~(unsigned int)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	raw.c_lflag &= ~(unsigned int)(ECHO | ECHONL | ICANON | IEXTEN);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
		return;
	termios_saved = 1;
	/* Blocked ones (the VM's stop signals) go to signalfd; ignored ones (nohup) stay so. */
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old;

		if (!sigaction(fatal[i], NULL, &old) && old.sa_handler != SIG_IGN)
			signal(fatal[i], fatal_signal);
	}
}

void console_init(struct console *c)
{
	memset(c, 0, sizeof(*c));
	c->out_fd = -1;
}

int console_open(struct console *c, const struct vm_config *cfg)
{
	char err[512];

	if (cfg->console == CONSOLE_STDIO) {
		c->out_fd = STDOUT_FILENO;
		return 0;
	}
	c->out_fd = path_open_output("--console", cfg->console_path, err, sizeof(err));
	if (c->out_fd < 0) {
		pr_err("%s", err);
		return -EINVAL;
	}
	c->own_out = true;
	return 0;
}

static void on_stdin(struct evloop *loop, int fd, uint32_t events, void *opaque)
{
	struct console *c = opaque;
	uint8_t buf[256];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)events;
	if (n > 0) {
		serial_rx(&c->vm->serial, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	evloop_del_fd(loop, fd);	/* EOF: the guest just gets no more input */
	c->in_attached = false;
}

void console_attach(struct console *c, struct vm *vm)
{
	c->vm = vm;
	if (c->own_out)
		return;	/* file console: output only */
	/* Regular files and /dev/null cannot be polled: then there is no input. */
	if (evloop_add_fd(vm->loop, STDIN_FILENO, EPOLLIN, on_stdin, c))
		return;
	c->in_attached = true;
	enter_raw_mode();
}

void console_close(struct console *c)
{
	restore_tty();
	if (c->in_attached && c->vm)
		evloop_del_fd(c->vm->loop, STDIN_FILENO);
	c->in_attached = false;
	if (c->own_out && c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
	c->own_out = false;
}
