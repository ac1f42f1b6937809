#ifndef YAPDB_CLZ4_SHIM_H
#define YAPDB_CLZ4_SHIM_H
// The LZ4 block API (LZ4_compress_default, LZ4_decompress_safe, LZ4_compressBound) from the system's liblz4.
#include <lz4.h>
#endif
