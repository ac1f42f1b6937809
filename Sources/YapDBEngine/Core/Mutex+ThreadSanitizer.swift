// ThreadSanitizer builds only: shadow `Synchronization.Mutex` with the pthread-based stand-in
// that TSan can see (Sources/YapDBStorage/Support/Mutex+ThreadSanitizer.swift explains why).
#if YAPDB_TSAN
import YapDBStorage

typealias Mutex<Value> = SanitizerMutex<Value>
#endif
