/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer's entry points, which every target in tests/fuzz/ defines
 * (LLVMFuzzerInitialize only where a target needs setup first).
 */
#ifndef CAPVISOR_TESTS_FUZZ_H
#define CAPVISOR_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
