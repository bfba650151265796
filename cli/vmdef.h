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
	char **where;		/* JSON path each argv[i] came from ("vcpu[1]", "mem") */
};

/*
 * The file must be strict JSON (util/json_strict.h): one object, no
 * duplicate or unknown keys, each value of its key's type (an integer key
 * takes neither "1" nor 1.5 nor true). Returns 0, or -EINVAL/-ENOENT/-ENOMEM
 * with err naming the option, the file, the JSON path and what was expected.
 */
int vmdef_load(const char *path, struct vmdef_args *out, char *err, size_t errlen);
/* The same from a JSON text already in memory: a C string, or len bytes (tests, fuzzing). */
int vmdef_parse(const char *json, struct vmdef_args *out, char *err, size_t errlen);
int vmdef_parse_buf(const char *json, size_t len, struct vmdef_args *out, char *err,
		    size_t errlen);
void vmdef_free(struct vmdef_args *args);
/* The i-th top-level key a file may hold (NULL past the last), for the tests. */
const char *vmdef_key_name(unsigned int i);

#endif
