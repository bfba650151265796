// SPDX-License-Identifier: MIT
/*
 * Levelled logging to stderr (util/log.h); the level is process-wide.
 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static enum log_level current_level = LOG_WARN;

static const char *const level_names[] = {
	[LOG_ERROR] = "error",
	[LOG_WARN] = "warning",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level log_get_level(void)
{
	return current_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t n;

	if (level > current_level)
		return;
	/* One write per message so lines from vCPU threads never interleave. */
	n = (size_t)snprintf(line, sizeof(line), "capvisor: %s: ", level_names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	n = strlen(line);
	if (n && line[n - 1] != '\n' && n < sizeof(line) - 1) {
		line[n++] = '\n';
		line[n] = 0;
	}
	fputs(line, stderr);
}
