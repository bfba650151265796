// SPDX-License-Identifier: MIT
/*
 * Dropping privileges after setup (util/privs.h): capabilities through
 * libcap-ng, the bounding and ambient sets, and --user's uid and gid.
 */
#include "util/privs.h"
#include "util/log.h"

#include <cap-ng.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

int privs_nr_threads(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!dir)
		return -1;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

static int lookup_user(const char *name, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		snprintf(err, errlen, "--user %s: %s", name,
			 errno ? strerror(errno) : "no such user");
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static bool wanted(const struct privs_opts *opts, unsigned int cap)
{
	return (cap == CAP_SYS_NICE && opts->keep_sys_nice) || (cap == CAP_KILL && opts->keep_kill);
}

/* Re-reads the process state and checks it holds exactly what we asked for. */
static int verify(const struct privs_opts *opts, char *err, size_t errlen)
{
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() < 0) {
		snprintf(err, errlen, "dropping privileges: cannot read back our capabilities");
		return -1;
	}
	for (unsigned int cap = 0; cap <= CAP_LAST_CAP; cap++) {
		if (capng_have_capability(CAPNG_EFFECTIVE, cap) == wanted(opts, cap) &&
		    capng_have_capability(CAPNG_PERMITTED, cap) == wanted(opts, cap))
			continue;
		snprintf(err, errlen, "dropping privileges: capability %s %s after the drop",
			 capng_capability_to_name(cap) ? capng_capability_to_name(cap) : "?",
			 wanted(opts, cap) ? "was not kept" : "remains");
		return -1;
	}
	return 0;
}

static bool has_any_caps(void)
{
	bool any;
	void *state = capng_save_state();

	capng_clear(CAPNG_SELECT_ALL);
	any = capng_get_caps_process() < 0 ||
	      capng_have_permitted_capabilities() != CAPNG_NONE;
	capng_restore_state(&state);
	return any;
}

int privs_drop(const struct privs_opts *opts, char *err, size_t errlen)
{
	int threads = privs_nr_threads();
	uid_t uid = 0;
	gid_t gid = 0;
	int rc;

	if (threads != 1) {
		snprintf(err, errlen,
			 "dropping privileges: the process has %d threads; capabilities are per "
			 "thread, so drop them before starting any", threads);
		return -1;
	}
	if (opts->user && lookup_user(opts->user, &uid, &gid, err, errlen) < 0)
		return -1;
	capng_clear(CAPNG_SELECT_ALL);
	if (opts->keep_sys_nice)
		capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_SYS_NICE);
	if (opts->keep_kill)
		capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_KILL);
	if (opts->user) {
		/* Sets keep-caps, changes gid, groups and uid, then applies the sets above. */
		rc = capng_change_id((int)uid, (int)gid, CAPNG_INIT_SUPP_GRP |
				     CAPNG_CLEAR_BOUNDING | CAPNG_CLEAR_AMBIENT);
		if (rc < 0) {
			snprintf(err, errlen, "--user %s: switching to uid %u gid %u failed "
				 "(libcap-ng step %d)", opts->user, uid, gid, rc);
			return -1;
		}
	} else if (!has_any_caps()) {
		/*
		 * Already unprivileged: nothing to drop, and the bounding set cannot
		 * be cleared without CAP_SETPCAP; NO_NEW_PRIVS below still stops
		 * anything being gained through exec.
		 */
	} else if ((rc = capng_apply(CAPNG_SELECT_ALL)) < 0) {
		snprintf(err, errlen, "dropping privileges: capng_apply failed (step %d)%s", rc,
			 rc == -4 ? ": no CAP_SETPCAP to clear the bounding set" : "");
		return -1;
	}
	/* No regaining anything through setuid binaries either. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "dropping privileges: PR_SET_NO_NEW_PRIVS: %s",
			 strerror(errno));
		return -1;
	}
	if (verify(opts, err, errlen) < 0)
		return -1;
	pr_info("privileges dropped: keeping %s%s%s%s%s",
		opts->keep_sys_nice ? "CAP_SYS_NICE " : "", opts->keep_kill ? "CAP_KILL " : "",
		opts->keep_sys_nice || opts->keep_kill ? "" : "no capabilities",
		opts->user ? ", running as " : "", opts->user ? opts->user : "");
	return 0;
}
