// SPDX-License-Identifier: MIT
/*
 * qmp_attach_vm() with the real backend (vmm/qmp/qmp_vm.c) over a VM shell with
 * no vCPUs and no dispatcher (what --sched host gives the backend): the
 * socket is served on the VM's event loop, queries work, QoS changes are
 * refused, quit emits SHUTDOWN, ends the VM as a poweroff and removes the
 * socket on detach. No KVM needed.
 */
#include "tests/unit/harness.h"
#include "util/evloop.h"
#include "dispatch/hostspec.h"
#include "vmm/qmp_attach.h"
#include "vmm/kvm/vm.h"
#include "vmm/vm_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_unix(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_attach_serves_and_quits(void)
{
	static const char script[] =
		"{\"execute\":\"qmp_capabilities\"}\n"
		"{\"execute\":\"query-host\",\"id\":1}\n"
		"{\"execute\":\"set-vcpu-cluster\",\"arguments\":{\"vcpu\":0},\"id\":2}\n"
		"{\"execute\":\"stop\",\"id\":3}\n"
		"{\"execute\":\"quit\",\"id\":4}\n";
	char path[] = "/tmp/capvisor-attach-XXXXXX", sock[64], err[256] = "", out[8192];
	struct vm vm = { .nr_vcpus = 0 };
	struct vm_sched vs = { .cfg.mode = VM_SCHED_HOST };
	struct qmp_attachment *a;
	ssize_t n, total = 0;
	int fd, rounds = 0;

	CU_ASSERT_FATAL(mkdtemp(path) != NULL);
	snprintf(sock, sizeof(sock), "%s/vm.sock", path);
	pthread_mutex_init(&vm.exit_lock, NULL);
	vm.loop = evloop_new();
	host_spec_default(&vs.cfg.host, 2);
	CU_ASSERT_FATAL(host_spec_place(&vs.cfg.host, 2, vs.host_cpu, err, sizeof(err)) == 0);
	a = qmp_attach_vm(&vm, &vs, sock, err, sizeof(err));
	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT(qmp_attach_vm(&vm, &vs, sock, err, sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "in use by a running instance") != NULL);
	fd = connect_unix(sock);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, script, strlen(script)), (ssize_t)strlen(script));
	while (!evloop_stopped(vm.loop) && rounds++ < 100)
		evloop_run_once(vm.loop, 100);
	CU_ASSERT(evloop_stopped(vm.loop));
	CU_ASSERT_EQUAL(vm_exit_kind(&vm), VM_EXIT_POWEROFF);
	qmp_detach_vm(a);
	CU_ASSERT(access(sock, F_OK) != 0);
	while ((n = read(fd, out + total, sizeof(out) - 1 - (size_t)total)) > 0)
		total += n;
	out[total] = '\0';
	CU_ASSERT(strstr(out, "{\"QMP\":") == out);
	CU_ASSERT(strstr(out, "\"clusters\":[{\"name\":\"cpu0\",\"capacity\":1024") != NULL);
	CU_ASSERT(strstr(out, "\"pcpus\":[{\"pcpu\":0,") != NULL);
	/* No vCPUs in this shell, so even vCPU 0 is out of range. */
	CU_ASSERT(strstr(out, "Parameter 'vcpu' out of range: 0") != NULL);
	CU_ASSERT(strstr(out, "need the capvisor scheduler (this VM runs with --sched host)\"},\"id\":3}") != NULL);
	CU_ASSERT(strstr(out, "\"event\":\"SHUTDOWN\",\"data\":{\"guest\":false,\"reason\":\"host-qmp-quit\"}") != NULL);
	CU_ASSERT(strstr(out, "{\"return\":{},\"id\":4}\n") != NULL);
	/* Exactly one SHUTDOWN, although detach would send one if quit had not. */
	CU_ASSERT(strstr(strstr(out, "SHUTDOWN") + 1, "SHUTDOWN") == NULL);
	close(fd);
	evloop_free(vm.loop);
	pthread_mutex_destroy(&vm.exit_lock);
	rmdir(path);
}

UNIT_SUITE(qmp_attach, NULL, NULL, UNIT_TEST(test_attach_serves_and_quits))
