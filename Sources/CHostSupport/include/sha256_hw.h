#ifndef CTXH_SHA256_HW_H
#define CTXH_SHA256_HW_H

#include <stddef.h>
#include <stdint.h>

/// The SHA-256 round constants (FIPS 180-4 §4.2.2): the hardware path's and the portable Swift
/// implementation's one table.
extern const uint32_t ctxh_sha256_k[64];

/// 1 when this CPU has the SHA-256 instructions this build can use (x86-64 SHA-NI with SSSE3 and
/// SSE4.1), else 0. Checked once with cpuid; cheap to call.
int ctxh_sha256_hw_available(void);

/// Runs the SHA-256 compression function over `blocks` 64-byte blocks of `data`, updating
/// `state` (the eight working words, in the FIPS 180-4 order). Only call when
/// `ctxh_sha256_hw_available()` is 1.
void ctxh_sha256_hw_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
