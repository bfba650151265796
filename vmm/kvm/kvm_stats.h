/* SPDX-License-Identifier: MIT */
/*
 * KVM binary statistics (KVM_GET_STATS_FD, Documentation/virt/kvm/api.rst
 * "KVM_GET_STATS_FD"): descriptors are read once at open; each value read
 * afterwards is a single pread() at the offset its descriptor gives.
 */
#ifndef CAPVISOR_KVM_STATS_H
#define CAPVISOR_KVM_STATS_H

#include <stdint.h>

struct kvm_stats;

/* From a VM or vCPU fd; NULL (and errno) when the kernel lacks binary stats. */
struct kvm_stats *kvm_stats_open(int kvm_object_fd);
void kvm_stats_close(struct kvm_stats *st);
/* Handle of a statistic by name ("blocking", "halt_exits", ...), or -ENOENT. */
int kvm_stats_find(const struct kvm_stats *st, const char *name);
/* Value (first element) of a statistic: 0 or -errno. One pread(). */
int kvm_stats_read(const struct kvm_stats *st, int handle, uint64_t *value);

#endif
