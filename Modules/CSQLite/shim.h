#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: a wrapper for the one setting used here.
// Turns off SQLite's count of the memory it allocates (sqlite3_memory_used, the soft heap
// limit), so each allocation skips a global lock. SQLite accepts it only before it initializes.
static inline int rtdb_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
