import Hummingbird
import NIOCore
import ServerCore

/// The request context of the REST API: Hummingbird's basic context plus the request's channel,
/// so a long response (an event stream) can notice the client going away.
struct ServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
