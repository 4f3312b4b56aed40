extension StorageEngine {
    /// A setting stored beside the data (the auth token, the writer id), or `nil`.
    public func setting(named name: String) throws -> [UInt8]? {
        try store.get(StorageKeys.settingKey(name))
    }

    /// Stores a setting durably (an empty value removes it).
    public func saveSetting(named name: String, _ value: [UInt8]) throws {
        var batch = WriteBatch()
        if value.isEmpty {
            batch.delete(StorageKeys.settingKey(name))
        } else {
            batch.put(StorageKeys.settingKey(name), value)
        }
        try commitShared(batch)
    }
}
