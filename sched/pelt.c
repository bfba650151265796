// SPDX-License-Identifier: MIT
/*
 * PELT tables; the arithmetic is inline in sched/pelt.h.
 */
#include "sched/internal.h"

/* y^n x 2^32 for n = 0..31, y = 2^(-1/32). */
const uint32_t pelt_y_inv[LOAD_AVG_PERIOD] = {
	0xffffffff, 0xfa83b2db, 0xf5257d15, 0xefe4b99b, 0xeac0c6e7, 0xe5b906e7, 0xe0ccdeec,
	0xdbfbb797, 0xd744fcca, 0xd2a81d91, 0xce248c15, 0xc9b9bd86, 0xc5672a11, 0xc12c4cca,
	0xbd08a39f, 0xb8fbaf47, 0xb504f333, 0xb123f581, 0xad583eea, 0xa9a15ab4, 0xa5fed6a9,
	0xa2704303, 0x9ef53260, 0x9b8d39b9, 0x9837f051, 0x94f4efa8, 0x91c3d373, 0x8ea4398b,
	0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
};

/*
 * 2^64 / divider for each divider LOAD_AVG_MAX - 1024 + period_contrib
 * (period_contrib 0..1023), computed by the compiler: the averages need
 * no division at run time.
 */
#define RECIP1(i)	(UINT64_MAX / PELT_DIVIDER(i))
#define RECIP4(i)	RECIP1(i), RECIP1((i) + 1), RECIP1((i) + 2), RECIP1((i) + 3)
#define RECIP16(i)	RECIP4(i), RECIP4((i) + 4), RECIP4((i) + 8), RECIP4((i) + 12)
#define RECIP64(i)	RECIP16(i), RECIP16((i) + 16), RECIP16((i) + 32), RECIP16((i) + 48)
#define RECIP256(i)	RECIP64(i), RECIP64((i) + 64), RECIP64((i) + 128), RECIP64((i) + 192)

const uint64_t pelt_recip[1024] = {
	RECIP256(0), RECIP256(256), RECIP256(512), RECIP256(768),
};
