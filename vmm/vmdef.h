/* SPDX-License-Identifier: MIT */
/*
 * VM definition files: a JSON object whose keys are `capvisor run` options,
 * so a long command line can live in a file and there is one validation path.
 *
 *   {
 *     "kernel": "guest.elf", "cmdline": "test=spin secs=5",
 *     "vcpus": 4, "mem": "256M", "host": "big=1:1024,little=1:512",
 *     "vcpu": [ { "vcpus": "0", "reservation": "3ms/10ms/10ms" },
 *               { "vcpus": "1-3", "weight": 2048, "uclamp": "0-512" } ]
 *   }
 *
 * vmdef_load() turns the file into the equivalent argument vector
 * ("--kernel", "guest.elf", ..., "--vcpu", "1-3:weight=2048,uclamp=0-512").
 * Options given on the command line after --config override the file's.
 */
#ifndef CAPVISOR_VMDEF_H
#define CAPVISOR_VMDEF_H

#include <stddef.h>

struct vmdef_args {
	int argc;
	char **argv;		/* argv[argc] == NULL; no program name */
};

/* Returns 0, or -EINVAL/-ENOENT/-ENOMEM with err naming the key or problem. */
int vmdef_load(const char *path, struct vmdef_args *out, char *err, size_t errlen);
/* The same from a JSON text already in memory (used by the tests). */
int vmdef_parse(const char *json, struct vmdef_args *out, char *err, size_t errlen);
void vmdef_free(struct vmdef_args *args);

#endif
