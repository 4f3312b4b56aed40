// Exposes glibc's malloc statistics (mallinfo2) to the benchmarks.
#include <malloc.h>
