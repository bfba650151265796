/* SPDX-License-Identifier: MIT */
/*
 * Path arguments from the command line and definition files, checked when
 * they are given rather than when they are first used: an input must be a
 * regular file, an output a regular file (created or truncated) or a new
 * one, never a FIFO, device, directory or socket, so that nothing blocks on
 * open and nothing fails at exit after the guest ran. Each opens the file
 * and checks what it opened (fstat), so the check cannot race a rename.
 *
 * Errors name the option, the path and what was expected, e.g.
 *   --stats-json: '/tmp/x' is a FIFO (expected a regular file to write)
 */
#ifndef CAPVISOR_PATHS_H
#define CAPVISOR_PATHS_H

#include <stddef.h>
#include <stdio.h>

/* A regular file to read: its fd (O_CLOEXEC), or -1 with err filled. */
int path_open_input(const char *opt, const char *path, char *err, size_t errlen);
/* Up to cap bytes of fd into buf (fewer at end of file): 0, or -errno. */
int path_read_all(int fd, char *buf, size_t cap, size_t *len);
/*
 * All of fd into a new buffer, NUL after it, closing fd: up to max + 1
 * bytes, so that a file larger than max shows as *len > max. 0 with *buf
 * (the caller frees it), or -errno with *buf NULL.
 */
int path_read_alloc(int fd, size_t max, char **buf, size_t *len);
/* A regular file to write, created (0644) or truncated: fd, or -1 with err. */
int path_open_output(const char *opt, const char *path, char *err, size_t errlen);
/*
 * The same without truncating, so that a caller opening several outputs
 * truncates them only once all were accepted; and as a stdio stream.
 */
int path_open_output_keep(const char *opt, const char *path, char *err, size_t errlen);
FILE *path_fopen_output_keep(const char *opt, const char *path, char *err, size_t errlen);
/*
 * A directory to write files into, created if missing (one level): 1 if it
 * was created (the caller removes it again if it gives up), 0 if it
 * existed, or -1 with err.
 */
int path_check_output_dir(const char *opt, const char *path, char *err, size_t errlen);
/*
 * Where a Unix socket is to be bound: short enough for sun_path, nothing
 * there but (possibly) an old socket, in an existing directory we may write
 * into. 0, or -1 with err filled.
 */
int path_check_socket(const char *opt, const char *path, char *err, size_t errlen);

#endif
