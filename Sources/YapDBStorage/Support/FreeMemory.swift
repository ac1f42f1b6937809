import CYapDBSupport

/// Gives the allocator's free pages back to the system (glibc's `malloc_trim`; nothing on other
/// C libraries). A large write transaction calls it after it drops a batch of memory (a spill
/// of its dirty pages, its write buffer before the commit): glibc otherwise keeps freed blocks
/// that sit among live ones resident, so the process's private memory would stay at its
/// highest point instead of following what the transaction holds. Costs a walk of the
/// allocator's free lists; call it per batch, never per row.
package func returnFreeMemoryToSystem() {
    yapdb_return_free_memory()
}
