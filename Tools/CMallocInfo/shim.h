// Exposes glibc's malloc statistics (mallinfo2) to the benchmarks, and mallopt to rtdb-server import.
#include <malloc.h>
