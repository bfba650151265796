/* SPDX-License-Identifier: MIT */
/*
 * The one parser of the user's key=value text: --host
 * (NAME=COUNT:CAPACITY[:levels=L,..]), --vcpu and --group
 * (KEY=VALUE[,KEY=VALUE...]), run's numeric options and `capvisor ctl`'s
 * key=value arguments. Numbers are plain decimal: digits only, no sign, no
 * space, no base prefix, so "0x10", " 5" or "+5" are not numbers anywhere.
 * Each caller words its own errors (it knows the option and the field);
 * these only say what was wrong (-EINVAL) or too large (-ERANGE).
 */
#ifndef CAPVISOR_KEYVAL_H
#define CAPVISOR_KEYVAL_H

#include <stdbool.h>

/*
 * The decimal number at *s, at most max, and *s moved past it. 0; -EINVAL
 * if *s does not start with a digit (*s unmoved); -ERANGE as soon as the
 * digits read exceed max (*s just past the digit that did).
 */
int kv_scan_uint(const char **s, unsigned long long max, unsigned long long *out);
/* All of s as a decimal number <= max: 0, or -EINVAL (not a number, text after it, > max). */
int kv_parse_uint(const char *s, unsigned long long max, unsigned long long *out);
/* All of s as a decimal integer with an optional '-', within long long: 0 or -EINVAL. */
int kv_parse_int(const char *s, long long *out);

/*
 * Cuts the next item off a list separated by sep, in place: the separator
 * becomes a NUL and *list moves past it (NULL after the last item).
 * Returns the item, which may be empty.
 */
char *kv_next_item(char **list, char sep);
/*
 * Splits item at its first '=', in place: the '=' becomes a NUL, so item
 * is the key (possibly empty) and *value what followed. -EINVAL (item
 * unchanged) if there is no '='.
 */
int kv_split(char *item, char **value);

#endif
