public import Foundation
import Synchronization

/// The options of a ``FirebaseApp``, as Firebase's `FirebaseOptions`: of them, this library uses
/// ``databaseURL``; the others are kept so code that sets or reads them compiles and behaves.
public final class FirebaseOptions: NSObject, Sendable {
    /// The options by plist key, shared across threads as apps share their options.
    private let values: Mutex<[String: String]>

    /// Options for the app with `googleAppID` and `gcmSenderID` (no database URL yet).
    public init(googleAppID: String, gcmSenderID: String) {
        values = Mutex(["GOOGLE_APP_ID": googleAppID, "GCM_SENDER_ID": gcmSenderID])
    }

    /// The options in a `GoogleService-Info.plist`, or nil when the file cannot be read.
    public init?(contentsOfFile plistPath: String) {
        guard let data = FileManager.default.contents(atPath: plistPath),
              let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else { return nil }
        values = Mutex(plist.compactMapValues { $0 as? String })
    }

    /// The options of `GoogleService-Info.plist` in the main bundle, or nil when there is none.
    public static func defaultOptions() -> FirebaseOptions? {
        guard let path = Bundle.main.path(forResource: "GoogleService-Info", ofType: "plist") else { return nil }
        return FirebaseOptions(contentsOfFile: path)
    }

    private subscript(key: String) -> String? {
        get { values.withLock { $0[key] } }
        set { values.withLock { $0[key] = newValue } }
    }

    /// The Realtime Database URL (`DATABASE_URL`): `https://<namespace>.firebaseio.com`, or
    /// `http://host:port?ns=<namespace>` for rtdb-server.
    public var databaseURL: String? {
        get { self["DATABASE_URL"] }
        set { self["DATABASE_URL"] = newValue }
    }

    /// The app's id (`GOOGLE_APP_ID`).
    public var googleAppID: String {
        get { self["GOOGLE_APP_ID"] ?? "" }
        set { self["GOOGLE_APP_ID"] = newValue }
    }

    /// The sender id (`GCM_SENDER_ID`).
    public var gcmSenderID: String {
        get { self["GCM_SENDER_ID"] ?? "" }
        set { self["GCM_SENDER_ID"] = newValue }
    }

    /// The API key (`API_KEY`).
    public var apiKey: String? {
        get { self["API_KEY"] }
        set { self["API_KEY"] = newValue }
    }

    /// The project id (`PROJECT_ID`).
    public var projectID: String? {
        get { self["PROJECT_ID"] }
        set { self["PROJECT_ID"] = newValue }
    }

    /// The bundle id (`BUNDLE_ID`).
    public var bundleID: String {
        get { self["BUNDLE_ID"] ?? Bundle.main.bundleIdentifier ?? "" }
        set { self["BUNDLE_ID"] = newValue }
    }

    /// The storage bucket (`STORAGE_BUCKET`).
    public var storageBucket: String? {
        get { self["STORAGE_BUCKET"] }
        set { self["STORAGE_BUCKET"] = newValue }
    }
}

/// A configured app, as Firebase's `FirebaseApp`: a name and its options. ``Database/database(app:)``
/// gives the app's database; ``configure()`` sets up the default app.
public final class FirebaseApp: NSObject, Sendable {
    /// The name of the default app.
    public static let defaultAppName = "__FIRAPP_DEFAULT"

    /// The configured apps by name.
    private static let apps = Mutex<[String: FirebaseApp]>([:])

    /// The app's name.
    public let name: String
    /// The app's options.
    public let options: FirebaseOptions

    private init(name: String, options: FirebaseOptions) {
        self.name = name
        self.options = options
    }

    /// Configures the default app from `GoogleService-Info.plist` in the main bundle when there is
    /// one (its `DATABASE_URL`), else from the environment (`FIREBASE_DATABASE_EMULATOR_HOST` with
    /// `FIREBASE_DATABASE_NAMESPACE`, or `FIREBASE_DATABASE_URL`), as ``Database/database()`` reads it.
    public static func configure() {
        let options = FirebaseOptions.defaultOptions() ?? FirebaseOptions(googleAppID: "", gcmSenderID: "")
        if options.databaseURL == nil { options.databaseURL = Registry.shared.environmentURL() }
        configure(options: options)
    }

    /// Configures the default app with `options`.
    public static func configure(options: FirebaseOptions) {
        configure(name: defaultAppName, options: options)
    }

    /// Configures the app called `name` with `options`. Configuring a name twice stops the
    /// program, as Firebase does.
    public static func configure(name: String, options: FirebaseOptions) {
        apps.withLock { apps in
            precondition(apps[name] == nil, "The app \(name) is already configured; configure each app once.")
            apps[name] = FirebaseApp(name: name, options: options)
        }
        if name == defaultAppName, let url = options.databaseURL { Registry.shared.configure(url: url) }
    }

    /// The default app, or nil before ``configure()``.
    public static func app() -> FirebaseApp? { app(name: defaultAppName) }

    /// The app called `name`, or nil.
    public static func app(name: String) -> FirebaseApp? { apps.withLock { $0[name] } }

    /// Every configured app by name, or nil when there is none.
    public static var allApps: [String: FirebaseApp]? {
        let all = apps.withLock { $0 }
        return all.isEmpty ? nil : all
    }

    /// Removes the app; `completion` hears whether it was configured.
    public func delete(_ completion: @escaping (Bool) -> Void) {
        completion(remove())
    }

    /// Removes the app and returns whether it was configured (Firebase's `async` form, which
    /// does not throw).
    @discardableResult
    public func delete() async -> Bool {
        remove()
    }

    private func remove() -> Bool {
        Self.apps.withLock { $0.removeValue(forKey: name) != nil }
    }
}

extension Database {
    /// The database of `app` (its options' `databaseURL`). Stops the program when the app has no
    /// database URL, as Firebase does.
    public static func database(app: FirebaseApp) -> Database {
        guard let url = app.options.databaseURL else {
            preconditionFailure("The app \(app.name) has no database URL; set FirebaseOptions.databaseURL (DATABASE_URL).")
        }
        return database(app: app, url: url)
    }

    /// The database at `url` for `app`.
    public static func database(app: FirebaseApp, url: String) -> Database {
        let database = database(url: url)
        database.setApp(app)
        return database
    }
}
