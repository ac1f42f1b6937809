// CRC32C with the CPU's instruction: three independent streams over 3 × 4 KiB blocks hide the
// instruction's latency, then the streams are combined by shifting through zero bytes with the
// same instruction (a table-free combine).
#include "yapdb_support.h"
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

int yapdb_crc32c_hardware_available(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
static uint32_t crc_u64(uint32_t crc, uint64_t v) { return (uint32_t)__builtin_ia32_crc32di(crc, v); }
__attribute__((target("sse4.2")))
static uint32_t crc_u8(uint32_t crc, uint8_t v) { return __builtin_ia32_crc32qi(crc, v); }

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
int yapdb_crc32c_hardware_available(void) { return 1; }
static uint32_t crc_u64(uint32_t crc, uint64_t v) { return __crc32cd(crc, v); }
static uint32_t crc_u8(uint32_t crc, uint8_t v) { return __crc32cb(crc, v); }
#else
int yapdb_crc32c_hardware_available(void) { return 0; }
uint32_t yapdb_crc32c_hardware(uint32_t state, const void *data, size_t length) { (void)data; (void)length; return state; }
#define YAPDB_NO_HW_CRC 1
#endif

#ifndef YAPDB_NO_HW_CRC
#define BLOCK 4096
#define POLY 0x82F63B78u
// x^(8*BLOCK) and x^(16*BLOCK) mod P in the reflected representation: multiplying a stream's
// state by these is the same as feeding it BLOCK (or 2*BLOCK) zero bytes.
#define SHIFT_ONE_BLOCK 0x35D73A62u
#define SHIFT_TWO_BLOCKS 0x28461564u

// a(x) * b(x) mod P, reflected (bit 31 is x^0): at most 32 steps, no tables.
static uint32_t multiply_mod_p(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, product = 0;
    for (;;) {
        if (a & m) {
            product ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ POLY : b >> 1;
    }
    return product;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
#endif
uint32_t yapdb_crc32c_hardware(uint32_t state, const void *data, size_t length) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t crc = state;
    while (length > 0 && ((uintptr_t)p & 7) != 0) { crc = crc_u8(crc, *p++); length--; }
    // Three streams: A over [0, BLOCK), B over [BLOCK, 2 BLOCK), C over [2 BLOCK, 3 BLOCK).
    // CRC is linear: crc(A||B||C) = shift(crcA, 2 BLOCK) ^ shift(crcB', BLOCK) ^ crcC' where
    // B and C start from 0; the shifts are two carry-less multiplications by constants.
    while (length >= 3 * BLOCK) {
        uint32_t a = crc, b = 0, c = 0;
        const uint64_t *qa = (const uint64_t *)p;
        const uint64_t *qb = (const uint64_t *)(p + BLOCK);
        const uint64_t *qc = (const uint64_t *)(p + 2 * BLOCK);
        for (size_t i = 0; i < BLOCK / 8; i++) {
            uint64_t va, vb, vc;
            memcpy(&va, qa + i, 8); memcpy(&vb, qb + i, 8); memcpy(&vc, qc + i, 8);
            a = crc_u64(a, va); b = crc_u64(b, vb); c = crc_u64(c, vc);
        }
        crc = multiply_mod_p(SHIFT_TWO_BLOCKS, a) ^ multiply_mod_p(SHIFT_ONE_BLOCK, b) ^ c;
        p += 3 * BLOCK;
        length -= 3 * BLOCK;
    }
    while (length >= 8) { uint64_t v; memcpy(&v, p, 8); crc = crc_u64(crc, v); p += 8; length -= 8; }
    while (length > 0) { crc = crc_u8(crc, *p++); length--; }
    return crc;
}
#endif
