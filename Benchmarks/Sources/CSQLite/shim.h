#ifndef YAPDB_BENCH_CSQLITE_SHIM_H
#define YAPDB_BENCH_CSQLITE_SHIM_H
// SQLite's C API from the system's libsqlite3 (apt: libsqlite3-dev).
#include <sqlite3.h>
#endif
