// SPDX-License-Identifier: MIT
/*
 * One admission for both kinds of VM (dispatch_vm_admit()): a stand-alone
 * VM's dispatcher (dispatch_create() with QoS) and a VM joined to a
 * dispatcher of free slots (capvisor host) get the same group layout
 * (names, parents, weights, caps, each vCPU in its group) and, refused,
 * the same text naming the VM and vCPU, with nothing of the VM left.
 * No thread is started: admission is all that runs.
 */
#include "tests/unit/harness.h"
#include "dispatch/dispatch.h"
#include "dispatch/dispatch_slot.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#define NR	3
#define SLOTS	8

static void nop_kick(void *opaque, unsigned int vcpu)
{
	(void)opaque;
	(void)vcpu;
}

static int never_halted(void *opaque, unsigned int vcpu)
{
	(void)opaque;
	(void)vcpu;
	return 0;
}

static const struct dispatch_vcpu_ops ops = { .kick = nop_kick, .halted = never_halted };
static struct host_spec hs;
static const unsigned int host_cpu[] = { 0, 0 };

static void make_qos(struct vm_qos *vq, struct vcpu_qos *qos, const char *const *specs)
{
	char err[256];

	CU_ASSERT_EQUAL_FATAL(host_spec_parse("two=2:1024", &hs, err, sizeof(err)), 0);
	vm_qos_default(vq);
	for (unsigned int i = 0; i < NR; i++)
		vcpu_qos_default(&qos[i]);
	CU_ASSERT_EQUAL_FATAL(vm_qos_set_weight(vq, "2048", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(group_spec_apply(vq, "web:weight=300,cap=5ms/10ms", err,
					       sizeof(err)), 0);
	for (; *specs; specs++)
		CU_ASSERT_EQUAL_FATAL(vcpu_spec_apply(*specs, NR, qos, err, sizeof(err)), 0);
}

static struct dispatch *standalone(const struct vm_qos *vq, const struct vcpu_qos *qos,
				   char *err, size_t errlen)
{
	struct dispatch_config cfg = {
		.host = &hs, .host_cpu = host_cpu, .nr_vcpus = NR, .qos = qos, .vm_qos = vq,
		.no_pin = true, .ops = &ops,
	};

	return dispatch_create(&cfg, err, errlen);
}

static struct dispatch *free_slots(void)
{
	struct dispatch_config cfg = {
		.host = &hs, .host_cpu = host_cpu, .nr_vcpus = SLOTS, .free_slots = true,
		.no_pin = true, .ops = &ops,
	};
	char err[256];
	struct dispatch *d = dispatch_create(&cfg, err, sizeof(err));

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	return d;
}

/* "name<parent weight cap/period" of the group slot's vCPU is in, and its parent's. */
static void describe(struct dispatch *d, unsigned int slot, char *out, size_t len)
{
	struct dispatch_vcpu_report r;
	struct sched_group_stats g, p = { .name = "-" };

	dispatch_vcpu_report(d, slot, &r);
	dispatch_lock(d);
	sched_group_stats(dispatch_engine(d), r.info.group, &g);
	if (g.parent != SCHED_NONE)
		sched_group_stats(dispatch_engine(d), g.parent, &p);
	dispatch_unlock(d);
	snprintf(out, len, "%s<%s %u %llu/%llu res %llu", g.name, p.name, g.weight,
		 (unsigned long long)g.cap_quota_ns, (unsigned long long)g.cap_period_ns,
		 (unsigned long long)r.info.dl.runtime_ns);
}

static void test_same_group_layout(void)
{
	static const char *const specs[] = { "1:group=web", "2:reservation=2ms/10ms/10ms", NULL };
	struct vcpu_qos qos[NR];
	struct vm_qos vq;
	unsigned int slots[NR];
	int gids[2];
	char err[256], a[128], b[128];
	struct dispatch *own, *host;

	make_qos(&vq, qos, specs);
	own = standalone(&vq, qos, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(own);
	host = free_slots();
	CU_ASSERT_EQUAL_FATAL(dispatch_vm_admit(host, &vq, qos, NR, slots, gids, err,
						sizeof(err)), 0);
	CU_ASSERT_EQUAL(dispatch_nr_groups(own), 2);
	for (unsigned int i = 0; i < NR; i++) {
		describe(own, i, a, sizeof(a));
		describe(host, slots[i], b, sizeof(b));
		CU_ASSERT_STRING_EQUAL(a, b);
	}
	describe(own, 1, a, sizeof(a));
	CU_ASSERT_STRING_EQUAL(a, "web<vm 300 5000000/10000000 res 0");
	describe(own, 2, a, sizeof(a));
	CU_ASSERT_STRING_EQUAL(a, "vm<- 2048 0/0 res 2000000");
	dispatch_destroy(own);
	dispatch_destroy(host);
}

/* Two pCPUs hold two 8ms/10ms reservations, not three. */
static void test_same_refusal(void)
{
	static const char *const specs[] = { "0-2:reservation=8ms/10ms/10ms", NULL };
	struct vcpu_qos qos[NR];
	struct vm_qos vq;
	unsigned int slots[NR];
	int gids[2];
	char own_err[512], host_err[512];
	struct dispatch *host;

	make_qos(&vq, qos, specs);
	CU_ASSERT_PTR_NULL(standalone(&vq, qos, own_err, sizeof(own_err)));
	host = free_slots();
	CU_ASSERT_NOT_EQUAL(dispatch_vm_admit(host, &vq, qos, NR, slots, gids, host_err,
					      sizeof(host_err)), 0);
	CU_ASSERT_STRING_EQUAL(own_err, host_err);
	CU_ASSERT_PTR_NOT_NULL(strstr(own_err, "VM 'vm' vCPU 2: "));
	/* Nothing of it stays: every slot free, and the same VM fits without vCPU 2. */
	CU_ASSERT_EQUAL(dispatch_nr_free_slots(host), SLOTS);
	CU_ASSERT_EQUAL(dispatch_vm_admit(host, &vq, qos, NR - 1, slots, gids, host_err,
					  sizeof(host_err)), 0);
	dispatch_destroy(host);
}

static void test_unknown_group_refused(void)
{
	static const char *const specs[] = { "1:group=web", NULL };
	struct vcpu_qos qos[NR];
	struct vm_qos vq;
	unsigned int slots[NR];
	int gids[2];
	char err[256];
	struct dispatch *host;

	make_qos(&vq, qos, specs);
	snprintf(qos[1].group, sizeof(qos[1].group), "db");
	host = free_slots();
	CU_ASSERT_NOT_EQUAL(dispatch_vm_admit(host, &vq, qos, NR, slots, gids, err, sizeof(err)),
			    0);
	CU_ASSERT_STRING_EQUAL(err, "VM 'vm' vCPU 1: group 'db' does not exist");
	CU_ASSERT_EQUAL(dispatch_nr_free_slots(host), SLOTS);
	dispatch_destroy(host);
}

UNIT_SUITE(dispatch_admit, NULL, NULL, UNIT_TEST(test_same_group_layout),
	   UNIT_TEST(test_same_refusal), UNIT_TEST(test_unknown_group_refused))
