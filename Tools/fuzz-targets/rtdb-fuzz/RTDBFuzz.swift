import FuzzJSON
import FuzzRESTQuery
import FuzzRows
import FuzzRules
import FuzzSupport
import FuzzToken
import FuzzWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every fuzz target in one program: `rtdb-fuzz TARGET ARGUMENTS...` runs the check of the target
/// named (`json` or `fuzz-json`, ...) under libFuzzer when built by `Tools/fuzz`, or replays the
/// files named after it in a normal build (`swift run rtdb-fuzz json FILE-OR-DIRECTORY`).
///
/// The name is also put in the environment (`RTDB_FUZZ_TARGET`): libFuzzer's `-fork` children are
/// started with libFuzzer's own flags only, and take the target from there.
@main
enum RTDBFuzz {
    /// The targets by name, in the order `Tools/fuzz --all` runs them.
    static let targets: [(name: String, check: @Sendable ([UInt8]) -> Void)] = [
        ("json", checkJSON),
        ("wire", checkWire),
        ("rest-query", checkRESTTarget),
        ("rules", checkRules),
        ("rows", checkRows),
        ("token", checkToken),
    ]

    static let environmentName = "RTDB_FUZZ_TARGET"

    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count > 1, let check = check(named: arguments[1]) {
            setenv(environmentName, arguments[1], 1)
            FuzzInput.run(check, droppingArgumentAt: 1)
        }
        if let named = getenv(environmentName), let check = check(named: String(cString: named)) {
            FuzzInput.run(check, droppingArgumentAt: nil)
        }
        let names = targets.map(\.name).joined(separator: ", ")
        let given = arguments.count > 1 ? "'\(arguments[1])' is not a fuzz target" : "no fuzz target named"
        let message = "error: \(given) (targets: \(names))\nusage: rtdb-fuzz TARGET [FILE-OR-DIRECTORY...]\n"
        _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        exit(2)
    }

    /// The check of the target called `name`, with or without the `fuzz-` prefix.
    static func check(named name: String) -> (@Sendable ([UInt8]) -> Void)? {
        let bare = name.hasPrefix("fuzz-") ? String(name.dropFirst("fuzz-".count)) : name
        return targets.first { $0.name == bare }?.check
    }
}
