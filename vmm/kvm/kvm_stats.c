// SPDX-License-Identifier: MIT
/*
 * KVM binary statistics (vmm/kvm/kvm_stats.h): reads the descriptors once,
 * then each value with one pread().
 */
#include "vmm/kvm/kvm_stats.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct kvm_stat_entry {
	char *name;
	uint64_t offset;	/* absolute file offset of the value */
};

struct kvm_stats {
	int fd;
	unsigned int nr;
	struct kvm_stat_entry *entries;
	char *names;
};

static int read_descriptors(struct kvm_stats *st, const struct kvm_stats_header *h)
{
	size_t desc_size = sizeof(struct kvm_stats_desc) + h->name_size;
	uint8_t *buf = malloc(desc_size * h->num_desc);
	int ret = 0;

	st->entries = calloc(h->num_desc, sizeof(*st->entries));
	st->names = calloc(h->num_desc, h->name_size + 1);
	if (!buf || !st->entries || !st->names) {
		ret = -ENOMEM;
		goto out;
	}
	if (pread(st->fd, buf, desc_size * h->num_desc, h->desc_offset) !=
	    (ssize_t)(desc_size * h->num_desc)) {
		ret = -EIO;
		goto out;
	}
	for (unsigned int i = 0; i < h->num_desc; i++) {
		struct kvm_stats_desc d;
		char *name = st->names + (size_t)i * (h->name_size + 1);

		memcpy(&d, buf + i * desc_size, sizeof(d));
		memcpy(name, buf + i * desc_size + sizeof(d), h->name_size);
		st->entries[i].name = name;
		st->entries[i].offset = h->data_offset + d.offset;
	}
	st->nr = h->num_desc;
out:
	free(buf);
	return ret;
}

struct kvm_stats *kvm_stats_open(int kvm_object_fd)
{
	struct kvm_stats_header h;
	struct kvm_stats *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->fd = ioctl(kvm_object_fd, KVM_GET_STATS_FD, NULL);
	if (st->fd < 0)
		goto fail;
	if (pread(st->fd, &h, sizeof(h), 0) != sizeof(h) || h.name_size > 4096 ||
	    h.num_desc > 65536) {
		errno = EIO;
		goto fail;
	}
	if (read_descriptors(st, &h)) {
		errno = EIO;
		goto fail;
	}
	return st;
fail:
	kvm_stats_close(st);
	return NULL;
}

void kvm_stats_close(struct kvm_stats *st)
{
	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	free(st->entries);
	free(st->names);
	free(st);
}

int kvm_stats_find(const struct kvm_stats *st, const char *name)
{
	for (unsigned int i = 0; i < st->nr; i++)
		if (!strcmp(st->entries[i].name, name))
			return (int)i;
	return -ENOENT;
}

int kvm_stats_read(const struct kvm_stats *st, int handle, uint64_t *value)
{
	if (handle < 0 || (unsigned int)handle >= st->nr)
		return -EINVAL;
	if (pread(st->fd, value, sizeof(*value), (off_t)st->entries[handle].offset) !=
	    sizeof(*value))
		return -EIO;
	return 0;
}

