import CLevelDB

/// The option objects every LevelDB database here opens with, owned and destroyed together.
///
/// ``LevelDBStore`` uses them, and so does rtdb-bench's raw LevelDB engine, whose figures are
/// only comparable when its settings are the store's: a bloom filter (10 bits per key), an 8 MB
/// block cache, paranoid checks (a corrupt log record fails the open instead of silently dropping
/// the writes it held), checksums verified on every read, and synced writes for durable batches.
package final class LevelDBOptions {
    /// Database options (create if missing, paranoid checks, filter policy, cache).
    package let options = leveldb_options_create()
    /// Read options (checksums verified).
    package let readOptions = leveldb_readoptions_create()
    /// Write options for batches that need not be synced.
    package let writeOptions = leveldb_writeoptions_create()
    /// Write options for durable batches (synced).
    package let syncWriteOptions = leveldb_writeoptions_create()
    private let filterPolicy = leveldb_filterpolicy_create_bloom(10)
    private let cache = leveldb_cache_create_lru(8 << 20)

    /// The options, configured.
    package init() {
        leveldb_options_set_create_if_missing(options, 1)
        leveldb_options_set_paranoid_checks(options, 1)
        leveldb_readoptions_set_verify_checksums(readOptions, 1)
        leveldb_options_set_filter_policy(options, filterPolicy)
        leveldb_options_set_cache(options, cache)
        leveldb_writeoptions_set_sync(syncWriteOptions, 1)
    }

    deinit {
        leveldb_options_destroy(options)
        leveldb_filterpolicy_destroy(filterPolicy)
        leveldb_cache_destroy(cache)
        leveldb_readoptions_destroy(readOptions)
        leveldb_writeoptions_destroy(writeOptions)
        leveldb_writeoptions_destroy(syncWriteOptions)
    }
}
