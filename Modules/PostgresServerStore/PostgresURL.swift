import Foundation
import PostgresNIO

/// A `postgres://user:password@host:port/database` URL as postgres-nio's client configuration.
enum PostgresURL {
    /// The configuration `url` names (TLS off unless `sslmode=require`), its sessions started
    /// with `settings` (``PostgresSessionSettings``).
    ///
    /// - Throws: ``PostgresStoreError`` naming what is wrong with the URL.
    static func configuration(_ url: String, settings: [(String, String)]) throws(PostgresStoreError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw PostgresStoreError("The PostgreSQL URL must look like postgres://user:password@host:5432/database, not \(redacted(url)).", code: .invalidInput)
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresStoreError("The PostgreSQL URL \(redacted(url)) names no host.", code: .invalidInput)
        }
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let password = components.password.flatMap { $0.removingPercentEncoding }
        let database = components.path.isEmpty || components.path == "/" ? nil : String(components.path.dropFirst())
        let requireTLS = components.queryItems?.contains { $0.name == "sslmode" && $0.value == "require" } ?? false
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: password, database: database,
            tls: requireTLS ? .require(.makeClientConfiguration()) : .disable)
        configuration.options.connectTimeout = .seconds(3)
        configuration.options.maximumConnections = 16
        configuration.options.additionalStartupParameters = settings
        return configuration
    }

    /// `url` without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }
}
