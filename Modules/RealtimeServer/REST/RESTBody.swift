import CoreTree
import Hummingbird
import NIOCore
import ServerCore

/// A REST write's body, parsed as it arrives: each chunk goes to a ``CoreTree/JSONStreamReader``
/// and is dropped, so a body of up to 256 MB never sits in memory beside the data parsed from
/// it (only the data, plus the reader's window of about 1 MiB).
///
/// Every failure is a ``ServerError`` and nothing is written: `tooBig` past 256 MB,
/// `invalidArgument` for malformed JSON, data that cannot be stored, or a body cut short.
enum RESTBody {
    /// The largest REST write body (256 MB, the REST API's limit with `writeSizeLimit=unlimited`).
    static let maxBytes = 256 * 1024 * 1024

    /// The body as data to write (PUT, POST), its data checked as written at `location`
    /// (``CoreTree/Validation/validateWrite(_:at:)``).
    static func node(of request: Request, at location: TreePath = .root) async throws -> Node {
        var root = Node.empty
        try await read(request, with: JSONStreamReader(location: location), malformed: "Invalid data; couldn't parse JSON object, array, or value.") { item in
            item.apply(to: &root)
        }
        return root
    }

    /// The body as an update (PATCH) at `location`: an object of paths to values, where `null`
    /// removes, in the order the paths first appear (a path given twice takes its last value).
    /// Each value is checked as written at `location` followed by its path.
    static func update(of request: Request, at location: TreePath) async throws -> [(path: TreePath, node: Node)] {
        var update = JSONUpdateAssembler()
        try await read(request, with: .update(location: location), malformed: "Invalid data; couldn't parse JSON object:") { update.add($0) }
        let members = update.members
        var children: [(path: TreePath, node: Node)] = []
        children.reserveCapacity(members.count)
        for member in members {
            do {
                children.append((try TreePath(validating: member.name), member.node))
            } catch {
                throw ServerError(.invalidArgument, error.message)
            }
        }
        return children
    }

    /// The body's bytes, whole (the rules document: small).
    static func bytes(of request: Request) async throws -> [UInt8] {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooBig
        } catch {
            throw cutShort(error)
        }
        try checkLength(buffer.readableBytes, of: request)
        return Array(buffer.readableBytesView)
    }

    /// Feeds the body to `reader` chunk by chunk, handing every item it completes to `consume`.
    private static func read(
        _ request: Request, with reader: JSONStreamReader, malformed: String, _ consume: (JSONStreamItem) -> Void
    ) async throws {
        var reader = reader
        var received = 0
        // A body announced past the limit is refused before any of it is read (a client that
        // asked `Expect: 100-continue` was not told to send it).
        if let announced = request.headers[.contentLength].flatMap(Int.init), announced > maxBytes { throw tooBig }
        do {
            var chunks = request.body.makeAsyncIterator()
            while true {
                let chunk: ByteBuffer?
                do {
                    chunk = try await chunks.next()
                } catch {
                    throw cutShort(error)
                }
                guard let chunk else { break }
                received += chunk.readableBytes
                guard received <= maxBytes else { throw tooBig }
                for item in try reader.read(chunk.readableBytesView) { consume(item) }
            }
            try checkLength(received, of: request)
            for item in try reader.finish() { consume(item) }
        } catch let error as CoreTreeError {
            let message = error.code == .malformedJSON ? "\(malformed) \(error.message)" : error.message
            throw ServerError(.invalidArgument, message, underlying: error)
        }
    }

    private static var tooBig: ServerError {
        ServerError(.tooBig, "The request body is larger than 256 MB, the largest REST write; nothing was written.")
    }

    private static func cutShort(_ error: any Error) -> ServerError {
        ServerError(.invalidArgument, "The request body did not arrive whole; nothing was written.", underlying: error)
    }

    /// Refuses a body shorter than its `Content-Length` said.
    private static func checkLength(_ received: Int, of request: Request) throws(ServerError) {
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared != received {
            throw ServerError(.invalidArgument, "The request body ended after \(received) of its \(declared) bytes; nothing was written.")
        }
    }
}
