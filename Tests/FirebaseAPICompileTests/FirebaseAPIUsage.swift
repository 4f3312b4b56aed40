// Calls the public API of Firebase's Swift interface for the Realtime Database (FirebaseDatabase
// 12.x, its headers as Swift imports them, and its Codable extensions) the way app code and
// Firebase's own API tests do. The point is that it compiles with only the import changed, in the
// Swift 5 language mode (FirebaseAPICompileTests) and in Swift 6 mode (FirebaseAPICompileSwift6Tests
// links this file); the test below also runs it against no server.
import Foundation
import RealtimeDatabase
import Testing

struct Score: Codable, Equatable {
    var name: String
    var points: Int
    @ServerTimestamp var updated: Date?
}

/// The synchronous API, as app code calls it outside `async` functions (inside one, Swift picks
/// the `async` overloads, for Firebase's SDK as for this library).
func useTheSynchronousAPI(_ database: Database) throws {
    // Database
    _ = Database.sdkVersion()
    Database.setLoggingEnabled(false)
    database.isPersistenceEnabled = false
    database.persistenceCacheSizeBytes = 10 * 1024 * 1024
    database.callbackQueue = DispatchQueue.main
    _ = database.app
    let root: DatabaseReference = database.reference()
    let scores: DatabaseReference = database.reference(withPath: "scores")
    _ = database.reference(fromURL: scores.url)
    database.goOffline()
    DatabaseReference.goOffline()

    // DatabaseReference
    let child: DatabaseReference = scores.child("ada")
    let pushed: DatabaseReference = scores.childByAutoId()
    let parent: DatabaseReference? = child.parent
    let top: DatabaseReference = child.root
    let key: String? = child.key
    let url: String = child.url
    let text: String = child.description()
    _ = (root, pushed, parent, top, key, url, text)
    child.setValue(["name": "Ada", "points": 3])
    child.setValue(["points": 4]) { (error: Error?, ref: DatabaseReference) in _ = (error, ref) }
    child.setValue("x", andPriority: 1)
    child.setValue("x", andPriority: nil) { error, ref in _ = (error, ref) }
    child.removeValue()
    child.removeValue { error, ref in _ = (error, ref) }
    child.setPriority(2)
    child.setPriority(nil) { error, ref in _ = (error, ref) }
    child.updateChildValues(["points": 5, "meta/seen": true])
    child.updateChildValues(["points": 6]) { error, ref in _ = (error, ref) }
    child.onDisconnectSetValue("gone")
    child.onDisconnectSetValue("gone") { error, ref in _ = (error, ref) }
    child.onDisconnectSetValue("gone", andPriority: 1)
    child.onDisconnectSetValue("gone", andPriority: 1) { error, ref in _ = (error, ref) }
    child.onDisconnectRemoveValue()
    child.onDisconnectRemoveValue { error, ref in _ = (error, ref) }
    child.onDisconnectUpdateChildValues(["online": false])
    child.onDisconnectUpdateChildValues(["online": false]) { error, ref in _ = (error, ref) }
    child.cancelDisconnectOperations()
    child.cancelDisconnectOperations(completionBlock: nil)
    child.cancelDisconnectOperations { error, ref in _ = (error, ref) }
    child.runTransactionBlock { (data: MutableData) -> TransactionResult in
        data.value = (data.value as? Int ?? 0) + 1
        return TransactionResult.success(withValue: data)
    }
    child.runTransactionBlock({ data in .success(withValue: data) }) { (error: Error?, committed: Bool, snapshot: DataSnapshot?) in
        _ = (error, committed, snapshot)
    }
    child.runTransactionBlock({ _ in TransactionResult.abort() }, andCompletionBlock: { _, _, _ in }, withLocalEvents: false)
    child.setValue(ServerValue.timestamp())
    child.setValue(ServerValue.increment(1))
    child.setValue(ServerValue.increment(NSNumber(value: 2.5)))

    // DatabaseQuery
    let query: DatabaseQuery = scores.queryOrdered(byChild: "points").queryLimited(toLast: 10)
    _ = scores.queryOrderedByKey().queryStarting(atValue: "a").queryEnding(atValue: "m")
    _ = scores.queryOrderedByValue().queryStarting(afterValue: 1).queryEnding(beforeValue: 9)
    _ = scores.queryOrderedByPriority().queryEqual(toValue: 1)
    _ = scores.queryOrdered(byChild: "points").queryStarting(atValue: 1, childKey: "a").queryEnding(atValue: 9, childKey: "z")
    _ = scores.queryOrdered(byChild: "points").queryStarting(afterValue: 1, childKey: "a").queryEnding(beforeValue: 9, childKey: "z")
    _ = scores.queryOrdered(byChild: "points").queryEqual(toValue: 1, childKey: "a").queryLimited(toFirst: 1)
    let reference: DatabaseReference = query.ref
    _ = reference
    let handle: DatabaseHandle = query.observe(.value) { (snapshot: DataSnapshot) in _ = snapshot }
    _ = query.observe(.childAdded, with: { snapshot in _ = snapshot }, withCancel: { (error: Error) in _ = error })
    _ = query.observe(.childMoved, andPreviousSiblingKeyWith: { (snapshot: DataSnapshot, previous: String?) in _ = (snapshot, previous) })
    _ = query.observe(.childChanged, andPreviousSiblingKeyWith: { _, _ in }, withCancel: { _ in })
    query.observeSingleEvent(of: .value) { snapshot in _ = snapshot }
    query.observeSingleEvent(of: .value, with: { _ in }, withCancel: { _ in })
    query.observeSingleEvent(of: .childAdded, andPreviousSiblingKeyWith: { _, _ in })
    query.observeSingleEvent(of: .childAdded, andPreviousSiblingKeyWith: { _, _ in }, withCancel: { _ in })
    query.getData { (error: Error?, snapshot: DataSnapshot?) in _ = (error, snapshot) }
    query.removeObserver(withHandle: handle)
    query.removeAllObservers()
    query.keepSynced(true)
    for type in [DataEventType.value, .childAdded, .childChanged, .childRemoved, .childMoved] { _ = type }

    // MutableData
    child.runTransactionBlock { data in
        let childData: MutableData = data.childData(byAppendingPath: "points")
        let has: Bool = data.hasChild(atPath: "points") && data.hasChildren()
        let children: UInt = data.childrenCount
        data.priority = 1
        _ = (childData, has, children, data.key)
        for case let item as MutableData in data.children { _ = item }
        return .success(withValue: data)
    }

    // Codable
    try child.setValue(from: Score(name: "Ada", points: 1))
    try child.setValue(from: Score(name: "Ada", points: 1)) { error in _ = error }
    try useTheStructureCoders()
    database.goOnline()
    DatabaseReference.goOnline()
    database.purgeOutstandingWrites()
}

/// Firebase's `Database.Encoder` / `Database.Decoder` (`FirebaseDataEncoder` / `FirebaseDataDecoder`),
/// their strategies, and `@ServerTimestamp` (a non-generic `Date?` wrapper).
func useTheStructureCoders() throws {
    let encoder = Database.Encoder()
    encoder.dateEncodingStrategy = .millisecondsSince1970
    encoder.dateEncodingStrategy = .secondsSince1970
    encoder.dateEncodingStrategy = .iso8601
    encoder.dateEncodingStrategy = .formatted(DateFormatter())
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(date.timeIntervalSince1970)
    }
    encoder.dateEncodingStrategy = .deferredToDate
    encoder.dataEncodingStrategy = .blob
    encoder.dataEncodingStrategy = .deferredToData
    encoder.dataEncodingStrategy = .custom { data, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(data.count)
    }
    encoder.dataEncodingStrategy = .base64
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    encoder.nonConformingFloatEncodingStrategy = .throw
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.keyEncodingStrategy = .custom { (codingPath: [any CodingKey]) -> any CodingKey in codingPath.last! }
    encoder.keyEncodingStrategy = .useDefaultKeys
    encoder.passthroughTypeResolver = PassDates.self
    encoder.userInfo[CodingUserInfoKey(rawValue: "app")!] = "compile"
    let tree: Any = try encoder.encode(Score(name: "Ada", points: 1))

    let decoder = Database.Decoder()
    decoder.dateDecodingStrategy = .millisecondsSince1970
    decoder.dateDecodingStrategy = .secondsSince1970
    decoder.dateDecodingStrategy = .iso8601
    decoder.dateDecodingStrategy = .formatted(DateFormatter())
    decoder.dateDecodingStrategy = .custom { decoder in Date(timeIntervalSince1970: try decoder.singleValueContainer().decode(Double.self)) }
    decoder.dateDecodingStrategy = .deferredToDate
    decoder.dataDecodingStrategy = .blob
    decoder.dataDecodingStrategy = .deferredToData
    decoder.dataDecodingStrategy = .custom { decoder in Data(try decoder.singleValueContainer().decode(String.self).utf8) }
    decoder.dataDecodingStrategy = .base64
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    decoder.nonConformingFloatDecodingStrategy = .throw
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    decoder.keyDecodingStrategy = .custom { codingPath in codingPath.last! }
    decoder.keyDecodingStrategy = .useDefaultKeys
    decoder.passthroughTypeResolver = PassDates.self
    decoder.userInfo[CodingUserInfoKey(rawValue: "app")!] = "compile"
    let back: Score = try decoder.decode(Score.self, from: tree)
    _ = back

    // @ServerTimestamp is not generic: nil is the server's time.
    let stamp = ServerTimestamp(wrappedValue: nil)
    let stamped: Date? = stamp.wrappedValue
    _ = (stamp == ServerTimestamp(wrappedValue: Date()), Set([stamp]), stamped)
}

/// A passthrough resolver, as app code declares one.
struct PassDates: StructureCodingPassthroughTypeResolver {
    static func isPassthroughType<T>(_ t: T) -> Bool { t is Date }
}

/// Reading a snapshot.
func readSnapshot(_ snapshot: DataSnapshot) throws {
    let value: Any? = snapshot.value
    let priority: Any? = snapshot.priority
    let exported: Any? = snapshot.valueInExportFormat()
    let exists: Bool = snapshot.exists()
    let count: UInt = snapshot.childrenCount
    let hasChildren: Bool = snapshot.hasChildren()
    let hasChild: Bool = snapshot.hasChild("name")
    let nested: DataSnapshot = snapshot.childSnapshot(forPath: "name/first")
    let snapshotKey: String? = snapshot.key
    let snapshotRef: DatabaseReference = snapshot.ref
    _ = (value, priority, exported, exists, count, hasChildren, hasChild, nested, snapshotKey, snapshotRef)
    for case let child as DataSnapshot in snapshot.children { _ = child }
    let decoded: Score = try snapshot.data(as: Score.self)
    _ = decoded
}

/// The `async` forms.
func useTheAsyncAPI(_ child: DatabaseReference, _ query: DatabaseQuery) async throws {
    let fetched: DataSnapshot = try await query.getData()
    _ = fetched
    try await child.setValue("y")
    try await child.setValue("y", andPriority: 1)
    try await child.removeValue()
    try await child.setPriority(3)
    try await child.updateChildValues(["a": 1])
    try await child.onDisconnectSetValue("z")
    try await child.onDisconnectSetValue("z", andPriority: 1)
    try await child.onDisconnectUpdateChildValues(["a": 1])
    try await child.onDisconnectRemoveValue()
    try await child.cancelDisconnectOperations()
    let (committed, result): (Bool, DataSnapshot) = try await child.runTransactionBlock { data in .success(withValue: data) }
    _ = (committed, result)
    // Firebase's forms return a value, as the imported Objective-C methods do.
    var ref: DatabaseReference = try await child.setValue("y")
    ref = try await child.setValue("y", andPriority: 1)
    ref = try await child.removeValue()
    ref = try await child.setPriority(3)
    ref = try await child.updateChildValues(["a": 1])
    ref = try await child.onDisconnectSetValue("z")
    ref = try await child.onDisconnectSetValue("z", andPriority: 1)
    ref = try await child.onDisconnectUpdateChildValues(["a": 1])
    ref = try await child.onDisconnectRemoveValue()
    ref = try await child.cancelDisconnectOperations()
    _ = ref
    _ = try await child.getData()
    // Firebase's single-event forms do not throw.
    let once: DataSnapshot = await query.observeSingleEvent(of: .value)
    let (snap, prev) = await child.observeSingleEventAndPreviousSiblingKey(of: .value)
    let (onceChild, previous): (DataSnapshot, String?) = await query.observeSingleEventAndPreviousSiblingKey(of: .childAdded)
    _ = (once, snap, prev, onceChild, previous)
}

/// The app entry points.
func configureTheApp() {
    if FirebaseApp.app() == nil { FirebaseApp.configure() }
    let options = FirebaseOptions(googleAppID: "1:2:ios:3", gcmSenderID: "2")
    options.databaseURL = "http://127.0.0.1:9?ns=compile"
    FirebaseApp.configure(name: "compile-\(UUID().uuidString)", options: options)
    if let app = FirebaseApp.app() {
        _ = Database.database(app: app)
        _ = Database.database(app: app, url: "http://127.0.0.1:9?ns=compile")
    }
}

/// FirebaseCore's `async` form.
func deleteTheApp(_ app: FirebaseApp) async {
    let deleted: Bool = await app.delete()
    _ = deleted
}

/// A synchronous write (inside an `async` function the `async` form would be picked).
func write(_ reference: DatabaseReference) {
    reference.setValue(["name": "Ada", "points": 3])
}

@Suite("Firebase API as app code uses it")
struct FirebaseAPICompileTests {
    @Test("the whole API compiles (Swift 5 and Swift 6 modes); the synchronous calls run offline without a crash")
    func compiles() async throws {
        let database = Database.database(url: "http://127.0.0.1:9?ns=compile-\(UUID().uuidString)")
        database.goOffline()
        let reference = database.reference(withPath: "scores/ada")
        write(reference)
        #expect(reference.description().contains("scores/ada"))
        _ = (useTheSynchronousAPI, readSnapshot, useTheAsyncAPI, deleteTheApp)  // compiled; not run: they need a server
        database.shutdown()
    }
}
