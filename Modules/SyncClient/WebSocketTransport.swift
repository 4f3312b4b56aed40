public import CoreTree
import HummingbirdWSClient
public import Logging
import NIOSSL
import SyncProtocol

/// Connects over WebSocket (HummingbirdWSClient), with TLS when the endpoint is secure.
public struct WebSocketTransport: Transport {
    /// The largest WebSocket frame or message accepted from the server, in bytes.
    public var maxFrameSize: Int = 1 << 24
    private let logger: Logger
    /// How secure endpoints are verified; nil uses the system's trust roots.
    private let tlsConfiguration: TLSConfiguration?

    /// Makes a transport that logs through `logger` and trusts the system's certificate authorities.
    public init(logger: Logger = Logger(label: "rtdb.transport")) {
        self.logger = logger
        tlsConfiguration = nil
    }

    /// Makes a transport that trusts only the certificates in `trustedCertificatesPEM` (PEM text
    /// holding one or more certificates: a private certificate authority, or a self-signed
    /// server's own certificate) for `wss://` endpoints. The server's name is still checked
    /// against its certificate.
    ///
    /// - Throws: ``TrustedCertificatesError`` when the text holds no readable PEM certificate.
    public init(trustedCertificatesPEM: String, logger: Logger = Logger(label: "rtdb.transport")) throws(TrustedCertificatesError) {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(trustedCertificatesPEM.utf8))
        } catch {
            throw TrustedCertificatesError(.unreadable, reason: "a certificate in it does not parse", underlying: error)
        }
        guard !certificates.isEmpty else { throw TrustedCertificatesError(.noCertificate, reason: "no PEM certificate found") }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(certificates)
        self.logger = logger
        tlsConfiguration = configuration
    }

    /// Opens a WebSocket to `endpoint`'s ``ConnectionEndpoint/webSocketURL(lastSessionID:)``.
    public func connect(to endpoint: ConnectionEndpoint, lastSessionID: String?) async throws -> any TransportConnection {
        try await WebSocketTransportConnection.open(
            url: endpoint.webSocketURL(lastSessionID: lastSessionID), maxFrameSize: maxFrameSize,
            tlsConfiguration: endpoint.secure ? tlsConfiguration : nil, logger: logger)
    }
}

/// Trusted certificates that could not be read.
public struct TrustedCertificatesError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The text is not PEM, or a certificate in it does not parse.
        public static let unreadable = Code("unreadable")
        /// The text parses but holds no certificate.
        public static let noCertificate = Code("noCertificate")
        public var description: String { name }
    }

    /// What kind of problem this is.
    public let code: Code
    /// Why, in a few words.
    public let reason: String
    /// The TLS library's error, if it raised one.
    public let underlyingError: (any Error)?

    init(_ code: Code, reason: String, underlying: (any Error)? = nil) {
        self.code = code
        self.reason = reason
        underlyingError = underlying
    }

    /// What is wrong and what to give instead.
    public var message: String {
        "the trusted certificates are not readable PEM (\(reason)); give one or more certificates, each between -----BEGIN CERTIFICATE----- and -----END CERTIFICATE-----"
    }

    public var description: String { "the trusted certificates are not readable PEM: \(reason)" }
}
