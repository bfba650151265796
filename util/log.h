/* SPDX-License-Identifier: MIT */
/*
 * Levelled logging to stderr. The level is process-wide (it is an operator
 * setting, not VM state); everything else about a VM lives in struct vm.
 */
#ifndef CAPVISOR_LOG_H
#define CAPVISOR_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
