#include "yapdb_support.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>

void yapdb_return_free_memory(void) { (void)malloc_trim(0); }
#else
void yapdb_return_free_memory(void) {}
#endif
