/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stream pattern the rcvfix programs send and check (the test programs
 * and rcvfix-bench --verify): byte N of a stream is a function of N and of
 * the stream's seed, so a receiver checks every byte where it lands.
 * Header-only; includes libc only.
 */
#ifndef RCVFIX_LIB_PATTERN_H
#define RCVFIX_LIB_PATTERN_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The stream pattern: byte @off of stream @seed (one direction of one
 * connection) is a function of both, so that a receiver checks every byte
 * where it lands: a lost, doubled, reordered or changed byte shows at its
 * offset. Made 8 bytes at a time (little-endian words, one multiply),
 * cheap beside the wakeup counts and transfer times the tests measure.
 */
static inline uint64_t pattern_word(uint64_t w, unsigned int seed)
{
	uint64_t v = ((w + 1) * 0x9e3779b97f4a7c15ULL) ^
		     ((seed + 1ULL) * 0xbf58476d1ce4e5b9ULL);

	return v ^ (v >> 29);
}

static inline uint8_t pattern_byte(uint64_t off, unsigned int seed)
{
	return (uint8_t)(pattern_word(off >> 3, seed) >> (8 * (off & 7)));
}

/* Fill @buf with the @len bytes of stream @seed from offset @off. */
static inline void pattern_fill(void *buf, size_t len, uint64_t off,
				unsigned int seed)
{
	uint8_t *p = buf;
	size_t i = 0;

	for (; i < len && ((off + i) & 7); i++)
		p[i] = pattern_byte(off + i, seed);
	for (; len - i >= 8; i += 8) {
		uint64_t v = htole64(pattern_word((off + i) >> 3, seed));

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = pattern_byte(off + i, seed);
}

/*
 * The index of @buf's first byte that is not stream @seed's at offset
 * @off + index, or -1 if all @len are.
 */
static inline long long pattern_bad(const void *buf, size_t len, uint64_t off,
				    unsigned int seed)
{
	const uint8_t *p = buf;
	size_t i = 0;

	for (; i < len && ((off + i) & 7); i++)
		if (p[i] != pattern_byte(off + i, seed))
			return (long long)i;
	for (; len - i >= 8; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		if (v != htole64(pattern_word((off + i) >> 3, seed)))
			break;
	}
	for (; i < len; i++)
		if (p[i] != pattern_byte(off + i, seed))
			return (long long)i;
	return -1;
}

#endif /* RCVFIX_LIB_PATTERN_H */
