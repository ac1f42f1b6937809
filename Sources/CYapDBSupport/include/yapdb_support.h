#ifndef YAPDB_SUPPORT_H
#define YAPDB_SUPPORT_H
// Small C helpers the storage layer cannot write in Swift: the CPU's CRC32C instruction and
// cache prefetch hints, and giving the allocator's free pages back to the system.
#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU has a CRC32C instruction (x86-64 SSE4.2, or AArch64 CRC), else 0.
int yapdb_crc32c_hardware_available(void);

/// Extends the raw (unreflected state, not inverted) CRC32C `state` over `length` bytes with the
/// CPU instruction. Call only when yapdb_crc32c_hardware_available() returned 1.
uint32_t yapdb_crc32c_hardware(uint32_t state, const void *data, size_t length);

/// Asks the CPU to start loading the `length` bytes at `address` into its caches, one hint
/// per 64-byte line. A hint only: it changes no result and never faults.
static inline void yapdb_prefetch(const void *address, size_t length) {
    const char *bytes = (const char *)address;
    for (size_t offset = 0; offset < length; offset += 64) __builtin_prefetch(bytes + offset);
}

/// Gives the memory allocator's free pages back to the system where the C library offers it
/// (glibc's malloc_trim); does nothing elsewhere. For after a large transaction freed many
/// blocks that sit among live ones, which the allocator would otherwise keep resident.
void yapdb_return_free_memory(void);

/// Atomic access to 64-bit words of memory shared between processes (the `NAME-shm` map): the
/// sequence number of its seqlock. `address` must be 8-byte aligned.
static inline uint64_t yapdb_shared_load_acquire(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_ACQUIRE);
}
static inline uint64_t yapdb_shared_load_relaxed(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_RELAXED);
}
static inline void yapdb_shared_store_release(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_RELEASE);
}
static inline void yapdb_shared_store_relaxed(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_RELAXED);
}
/// Fences around the seqlock's plain copies: release after marking a write begun, acquire
/// before re-reading the sequence number.
static inline void yapdb_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static inline void yapdb_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

#endif
