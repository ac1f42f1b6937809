#ifndef YAPDB_BENCH_CLMDB_SHIM_H
#define YAPDB_BENCH_CLMDB_SHIM_H
// LMDB's C API from the system's liblmdb (apt: liblmdb-dev).
#include <lmdb.h>
#endif
