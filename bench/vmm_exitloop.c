// SPDX-License-Identifier: MIT
/*
 * The raw KVM loop's guest code (bench/vmm_rawkvm.c ring0), run by a VMM as a
 * PVH ELF: COM1 gets 'A', then N `out 0x80` exits happen, then 'B', then the
 * ACPI S5 poweroff. The host timestamps 'A' and 'B' as they arrive on the
 * VMM's stdout, so the VMM's own exit path is measured on exactly the code
 * the raw loop runs, with the same clock.
 *
 *   vmm_exitloop N VMM [ARGS...]     (the ELF path is appended as the last argument)
 */
#include "util/util.h"

#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOAD 0x100000u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_from_timespec(&ts);
}

static size_t put_code(uint8_t *c, uint32_t n)
{
	static const uint8_t out_a[] = { 0x66, 0xba, 0xf8, 0x03, 0xb0, 'A', 0xee };
	static const uint8_t loop[] = { 0xb9, 0, 0, 0, 0, 0xe6, 0x80, 0xff, 0xc9, 0x75, 0xfa };
	static const uint8_t out_b[] = { 0x66, 0xba, 0xf8, 0x03, 0xb0, 'B', 0xee };
	static const uint8_t off[] = { 0xb0, 0x34, 0x66, 0xba, 0x00, 0x06, 0xee, 0xfa, 0xf4, 0xeb, 0xfd };
	size_t len = 0;

	memcpy(c + len, out_a, sizeof(out_a));
	len += sizeof(out_a);
	memcpy(c + len, loop, sizeof(loop));
	memcpy(c + len + 1, &n, 4);
	len += sizeof(loop);
	memcpy(c + len, out_b, sizeof(out_b));
	len += sizeof(out_b);
	memcpy(c + len, off, sizeof(off));
	return len + sizeof(off);
}

struct exitloop_elf {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Nhdr nh;
	char name[4];
	uint32_t entry;
	uint8_t code[64];
};

static void write_elf(const char *path, uint32_t n)
{
	struct exitloop_elf f;
	size_t code_len;
	FILE *out;

	memset(&f, 0, sizeof(f));
	memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
	f.eh.e_ident[EI_CLASS] = ELFCLASS64;
	f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	f.eh.e_ident[EI_VERSION] = EV_CURRENT;
	f.eh.e_type = ET_EXEC;
	f.eh.e_machine = EM_X86_64;
	f.eh.e_version = EV_CURRENT;
	f.eh.e_entry = LOAD;
	f.eh.e_phoff = offsetof(struct exitloop_elf, ph);
	f.eh.e_ehsize = sizeof(f.eh);
	f.eh.e_phentsize = sizeof(Elf64_Phdr);
	f.eh.e_phnum = 2;
	code_len = put_code(f.code, n);
	f.ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
				.p_offset = offsetof(struct exitloop_elf, code), .p_vaddr = LOAD,
				.p_paddr = LOAD, .p_filesz = code_len, .p_memsz = code_len, .p_align = 16 };
	f.ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = offsetof(struct exitloop_elf, nh),
				.p_filesz = sizeof(f.nh) + 8, .p_align = 4 };
	f.nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 4, .n_type = 18 };	/* PHYS32_ENTRY */
	memcpy(f.name, "Xen", 4);
	f.entry = LOAD;
	out = fopen(path, "wb");
	if (!out || fwrite(&f, sizeof(f), 1, out) != 1 || fclose(out)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/vmm-exitloop-XXXXXX";
	uint64_t t_a = 0, t_b = 0;
	int fd, out[2], status;
	char **cmd;
	uint32_t n;
	pid_t pid;
	char c;

	if (argc < 3 || atoi(argv[1]) < 1) {
		fprintf(stderr, "usage: vmm_exitloop N VMM [ARGS...]\n");
		return 2;
	}
	n = (uint32_t)atoi(argv[1]);
	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	write_elf(path, n);
	cmd = calloc((size_t)argc, sizeof(*cmd));
	for (int i = 2; i < argc; i++)
		cmd[i - 2] = argv[i];
	cmd[argc - 2] = path;
	if (pipe(out) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(out[1], 1);
		dup2(null, 0);
		dup2(null, 2);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(out[1]);
	while (read(out[0], &c, 1) == 1) {
		if (c == 'A')
			t_a = now_ns();
		else if (c == 'B')
			t_b = now_ns();
	}
	waitpid(pid, &status, 0);
	unlink(path);
	if (!t_a || !t_b || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "vmm_exitloop: %s did not run the loop (exit %d)\n", cmd[0],
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 1;
	}
	printf("{\"vmm\":\"%s\",\"mode\":\"ring0\",\"exits\":%u,\"ns_per_exit\":%llu}\n",
	       cmd[0], n, (unsigned long long)((t_b - t_a) / n));
	return 0;
}
