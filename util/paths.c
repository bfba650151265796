// SPDX-License-Identifier: MIT
/*
 * Path arguments checked at start (util/paths.h): open what is given, look
 * at what was opened, refuse anything but what the option expects.
 */
#include "util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

static int not_regular(const char *opt, const char *path, mode_t mode, const char *expected,
		       char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: '%s' is not a regular file: it is %s (expected %s)", opt, path,
		 kind_of(mode), expected);
	return -1;
}

/* Refuse a non-regular file before opening it: opening a device can have effects. */
static int refuse_special(const char *opt, const char *path, const char *expected, char *err,
			  size_t errlen)
{
	struct stat st;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return not_regular(opt, path, st.st_mode, expected, err, errlen);
	return 0;
}

/* Check what was opened (the authority: the path may have changed since stat). */
static int check_opened(int fd, const char *opt, const char *path, const char *expected,
			char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: '%s': %s", opt, path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		return not_regular(opt, path, st.st_mode, expected, err, errlen);
	/* O_NONBLOCK only kept open() from waiting on a FIFO's other end. */
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

/*
 * Open a regular file with flags: refuse a special file before opening,
 * check what was opened after. how names the access in the error ("" or
 * " for writing").
 */
static int open_regular(const char *opt, const char *path, int flags, const char *how,
			const char *expected, char *err, size_t errlen)
{
	int fd;

	if (refuse_special(opt, path, expected, err, errlen))
		return -1;
	fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open '%s'%s: %s (expected %s)", opt, path, how,
			 strerror(errno), expected);
		return -1;
	}
	if (check_opened(fd, opt, path, expected, err, errlen)) {
		close(fd);
		return -1;
	}
	return fd;
}

int path_open_input(const char *opt, const char *path, char *err, size_t errlen)
{
	return open_regular(opt, path, O_RDONLY, "", "a regular file to read", err, errlen);
}

int path_open_output_keep(const char *opt, const char *path, char *err, size_t errlen)
{
	/* No O_TRUNC: only a file found to be regular is truncated, by the caller. */
	return open_regular(opt, path, O_WRONLY | O_CREAT, " for writing",
			    "a regular file to write, or a new file's path", err, errlen);
}

int path_read_all(int fd, char *buf, size_t cap, size_t *len)
{
	ssize_t n;

	*len = 0;
	while (*len < cap && (n = read(fd, buf + *len, cap - *len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		*len += (size_t)n;
	}
	return 0;
}

int path_read_alloc(int fd, size_t max, char **buf, size_t *len)
{
	int rc;

	*buf = malloc(max + 2);
	rc = *buf ? path_read_all(fd, *buf, max + 1, len) : -ENOMEM;
	close(fd);
	if (rc) {
		free(*buf);
		*buf = NULL;
		return rc;
	}
	(*buf)[*len] = 0;
	return 0;
}

int path_open_output(const char *opt, const char *path, char *err, size_t errlen)
{
	int fd = path_open_output_keep(opt, path, err, errlen);

	if (fd >= 0 && ftruncate(fd, 0) < 0) {
		snprintf(err, errlen, "%s: cannot truncate '%s': %s", opt, path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

FILE *path_fopen_output_keep(const char *opt, const char *path, char *err, size_t errlen)
{
	int fd = path_open_output_keep(opt, path, err, errlen);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		snprintf(err, errlen, "%s: '%s': %s", opt, path, strerror(errno));
		close(fd);
	}
	return f;
}

int path_check_output_dir(const char *opt, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int created = 0;

	if (mkdir(path, 0755) == 0) {
		created = 1;
	} else if (errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create the directory '%s': %s", opt, path,
			 strerror(errno));
		return -1;
	}
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: '%s': %s", opt, path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: '%s' is %s (expected a directory to write into)", opt,
			 path, S_ISREG(st.st_mode) ? "a regular file" : kind_of(st.st_mode));
		return -1;
	}
	if (access(path, W_OK | X_OK) < 0) {
		snprintf(err, errlen, "%s: cannot write into the directory '%s': %s", opt, path,
			 strerror(errno));
		return -1;
	}
	return created;
}

/* The directory a path's last component would be created in. */
static int check_parent_dir(const char *opt, const char *path, char *err, size_t errlen)
{
	char *copy = strdup(path);
	const char *dir;
	struct stat st;
	int rc = 0;

	if (!copy) {
		snprintf(err, errlen, "%s: out of memory", opt);
		return -1;
	}
	dir = dirname(copy);
	if (stat(dir, &st) < 0) {
		snprintf(err, errlen, "%s: '%s': the directory '%s'%s%s (expected an existing "
			 "directory)", opt, path, dir, errno == ENOENT ? " " : ": ",
			 errno == ENOENT ? "does not exist" : strerror(errno));
		rc = -1;
	} else if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: '%s': '%s' is %s (expected an existing directory)", opt,
			 path, dir, S_ISREG(st.st_mode) ? "a regular file" : kind_of(st.st_mode));
		rc = -1;
	} else if (access(dir, W_OK | X_OK) < 0) {
		snprintf(err, errlen, "%s: '%s': cannot create a socket in '%s': %s", opt, path,
			 dir, strerror(errno));
		rc = -1;
	}
	free(copy);
	return rc;
}

int path_check_socket(const char *opt, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr;
	struct stat st;

	if (!*path || strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "%s: '%s' is %zu bytes long (expected a path of 1..%zu "
			 "bytes, the limit of a Unix socket address)", opt, path, strlen(path),
			 sizeof(addr.sun_path) - 1);
		return -1;
	}
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: '%s' exists and is %s (expected a new path or a "
			 "stale socket to replace)", opt, path,
			 S_ISREG(st.st_mode) ? "a regular file" : kind_of(st.st_mode));
		return -1;
	}
	return check_parent_dir(opt, path, err, errlen);
}
