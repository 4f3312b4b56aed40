import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
@testable import RealtimeDatabase
import SwiftASN1
import SyncClient
import TestSupport
import Testing
import X509

/// rtdb-server with `--tls-cert` and `--tls-key` (a certificate made here): REST and event
/// streams over `https://`, the client library over `wss://` trusting that certificate, and
/// clients that do not trust it refused.
@Suite("TLS", .serialized)
struct TLSTests {
    @Test func restStreamsAndTheClientLibraryWorkOverTLS() async throws {
        let directory = Clients.temporaryDirectory("tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = try SelfSignedIdentity(directory: directory)
        let server = try await ServerProcess.launch(
            backend: "memory", arguments: ["--tls-cert", identity.certificatePath, "--tls-key", identity.keyPath])
        defer { Task { await server.shutDown() } }
        let base = "https://localhost:\(server.port)"

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            try await checkTrusted(base: base, client: client, identity: identity)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()

        // Without the certificate among its trust roots, neither kind of client gets in.
        let untrusting = HTTPClient(eventLoopGroupProvider: .singleton)
        await #expect(throws: (any Error).self) {
            _ = try await untrusting.execute(HTTPClientRequest(url: "\(base)/greeting.json?ns=tls"), timeout: .seconds(20))
        }
        try await untrusting.shutdown()
        let endpoint = ConnectionEndpoint(host: "localhost", port: server.port, secure: true, namespace: "tls")
        await #expect(throws: (any Error).self) {
            _ = try await WebSocketTransport().connect(to: endpoint, lastSessionID: nil)
        }
        let trusting = try WebSocketTransport(trustedCertificatesPEM: identity.certificatePEM)
        let connection = try await trusting.connect(to: endpoint, lastSessionID: nil)
        await connection.close()
    }

    /// REST, an event stream and the client library, all trusting the certificate.
    private func checkTrusted(base: String, client: HTTPClient, identity: SelfSignedIdentity) async throws {
        // REST over https.
        var put = HTTPClientRequest(url: "\(base)/greeting.json?ns=tls")
        put.method = .PUT
        put.body = .bytes(ByteBuffer(string: "\"hello\""))
        let written = try await client.execute(put, timeout: .seconds(20))
        #expect(written.status == .ok)
        _ = try await written.body.collect(upTo: 1 << 20)
        let read = try await client.execute(HTTPClientRequest(url: "\(base)/greeting.json?ns=tls"), timeout: .seconds(20))
        #expect(String(buffer: try await read.body.collect(upTo: 1 << 20)) == "\"hello\"")

        // An event stream over https: the first event carries the data.
        var streamRequest = HTTPClientRequest(url: "\(base)/greeting.json?ns=tls")
        streamRequest.headers.add(name: "Accept", value: "text/event-stream")
        let stream = try await client.execute(streamRequest, timeout: .seconds(20))
        var received = ""
        for try await chunk in stream.body {
            received += String(buffer: chunk)
            if received.contains("\n\n") { break }
        }
        #expect(received.contains("event: put"))
        #expect(received.contains("\"data\":\"hello\""))

        // The client library over wss://, trusting the certificate.
        let database = try Database(url: "\(base)?ns=tls")
        try database.useTrustedCertificates(pem: identity.certificatePEM)
        defer { database.shutdown() }
        // The write's acknowledgement comes over the connection, so once it is in, reads go to the server.
        try await database.reference(withPath: "from-client").setValue(42)
        let snapshot = try await database.reference(withPath: "greeting").getData()
        #expect(snapshot.value as? String == "hello")
        let echoed = try await client.execute(HTTPClientRequest(url: "\(base)/from-client.json?ns=tls"), timeout: .seconds(20))
        #expect(String(buffer: try await echoed.body.collect(upTo: 1 << 20)) == "42")
    }

    @Test func unreadableTrustedCertificatesAreAClearError() {
        #expect(throws: DatabaseError.self) {
            try Database(url: "https://localhost:1?ns=x").useTrustedCertificates(pem: "not a certificate")
        }
    }
}

/// A key and a self-signed certificate for `localhost` and 127.0.0.1, written as PEM files.
struct SelfSignedIdentity {
    let certificatePEM: String
    let certificatePath: String
    let keyPath: String

    init(directory: String) throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key))
        certificatePEM = try certificate.serializeAsPEM().pemString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        certificatePath = directory + "/server.crt"
        keyPath = directory + "/server.key"
        try certificatePEM.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
    }
}

