public import CoreTree
import SyncProtocol

/// Failures of ``InMemoryTransport`` connections.
public enum InMemoryTransportError: CodedError, Sendable {
    /// The transport refuses connections (``InMemoryTransport/ConnectBehavior/refuse``).
    case refused
    /// The connection was closed, so nothing can be sent on it.
    case closed
    /// The fake server dropped the connection abruptly (``InMemoryServerSide/drop(_:)``).
    case dropped
    /// Nothing arrived within the time a test allowed.
    case timedOut

    /// The case's name as a code (an enum cannot be its own code: `==` compares codes).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The case, as a ``Code``.
    public var code: Code {
        switch self {
        case .refused: Code(description: "refused")
        case .closed: Code(description: "closed")
        case .dropped: Code(description: "dropped")
        case .timedOut: Code(description: "timedOut")
        }
    }

    /// What happened, for the test's failure message.
    public var message: String {
        switch self {
        case .refused: "The in-memory transport refuses connections (its connect behavior is .refuse)."
        case .closed: "The in-memory connection is closed; nothing can be sent on it."
        case .dropped: "The fake server dropped the connection."
        case .timedOut: "Nothing arrived within the time the test allowed."
        }
    }

    /// Always nil: these failures have no cause below them.
    public var underlyingError: (any Error)? { nil }
}
