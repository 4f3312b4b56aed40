import Foundation
import Synchronization

/// Removes `path` (a file or a directory tree) when the test process exits, if it is still there.
///
/// For what its owner's cleanup may not reach: the data directory of a server whose test failed
/// before stopping it, one whose stop was still under way when the last test ended, or a file
/// every test of the process shares.
public func removeAtExit(_ path: String) {
    _ = PathsRemovedAtExit.handler
    PathsRemovedAtExit.paths.withLock { $0.append(path) }
}

private enum PathsRemovedAtExit {
    static let paths = Mutex<[String]>([])

    static let handler: Void = {
        atexit {
            for path in PathsRemovedAtExit.paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
    }()
}
