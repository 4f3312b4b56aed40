#if FUZZING
import CLibFuzzer
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a fuzz target runs its check: under libFuzzer when built by `Tools/fuzz`
/// (`-sanitize=fuzzer -DFUZZING`), or, in the normal build, as a replay tool that runs the same
/// check once per file named on the command line (a reproducer libFuzzer saved, or a seed
/// corpus directory).
///
/// Every target is a library with one public check; one executable, `rtdb-fuzz`, links them all
/// and calls ``run(_:droppingArgumentAt:)`` with the one its command line names, so the fuzz build
/// plans and links one program instead of one per target. Under libFuzzer its `main` hands the
/// rest of the command line to `LLVMFuzzerRunDriver`.
public enum FuzzInput {
    /// Runs `check` on inputs: libFuzzer's, or the files named on the command line.
    ///
    /// Under libFuzzer the command line is libFuzzer's (corpus directories, `-max_total_time=`,
    /// ...); otherwise see ``replay(_:_:)``. The argument at index `nameIndex` (the target's name)
    /// is left out of both.
    /// - Parameters:
    ///   - check: the target's property check.
    ///   - nameIndex: the index in the command line of the argument that named the target, or
    ///     `nil` when none did (libFuzzer's `-fork` children get the name from the environment).
    public static func run(_ check: @escaping @Sendable ([UInt8]) -> Void, droppingArgumentAt nameIndex: Int?) -> Never {
        #if FUZZING
        FuzzCheck.current = check
        var argc = CommandLine.argc
        let argv = CommandLine.unsafeArgv
        if let nameIndex, nameIndex < Int(argc) {
            // libFuzzer reads every argument that is not a flag as a corpus directory: the
            // target's name goes. The process's own argument vector is writable, as in C.
            for index in nameIndex..<Int(argc) { argv[index] = argv[index + 1] }
            argc -= 1
        }
        var driverArgv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
        exit(LLVMFuzzerRunDriver(&argc, &driverArgv) { data, size in fuzzTestOneInput(data, size) })
        #else
        var arguments = CommandLine.arguments
        if let nameIndex, nameIndex < arguments.count { arguments.remove(at: nameIndex) }
        replay(Array(arguments.dropFirst()), check)
        exit(0)
        #endif
    }

    /// Runs `check` on every file in `arguments` (directories: on every file inside them, one
    /// level deep), or on standard input when there is none, and prints how many inputs passed.
    ///
    /// A property failure ends the process through `fatalError`, as it does under libFuzzer.
    /// - Parameters:
    ///   - arguments: the command-line arguments after the program name.
    ///   - check: the target's property check.
    public static func replay(_ arguments: [String], _ check: ([UInt8]) -> Void) {
        var paths: [String] = []
        for argument in arguments {
            if let names = directoryEntries(argument) {
                paths += names.sorted().map { argument + "/" + $0 }
            } else {
                paths.append(argument)
            }
        }
        if paths.isEmpty {
            check(readAll(fileDescriptor: 0))
            print("1 input from standard input passed")
            return
        }
        for path in paths {
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { fatalError("cannot open \(path)") }
            defer { close(descriptor) }
            check(readAll(fileDescriptor: descriptor))
        }
        print("\(paths.count) input(s) passed")
    }

    /// The names in the directory at `path`, or `nil` when it is not a directory.
    private static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    private static func readAll(fileDescriptor: CInt) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}

#if FUZZING
/// The check libFuzzer's callback runs: a C function pointer cannot capture it.
private enum FuzzCheck {
    /// Set once, before libFuzzer starts; libFuzzer calls back on the main thread only.
    nonisolated(unsafe) static var current: (@Sendable ([UInt8]) -> Void)?
}

/// libFuzzer's callback. The fuzzer runtime's own `main` (linked in, but not the one that runs:
/// SwiftPM points `main` at the target's) refers to it by this name.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzCheck.current?(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#endif

/// Ends the process with a message libFuzzer records (and the replay tool prints) when a
/// property of the code under test does not hold for an input.
/// - Parameters:
///   - condition: the property.
///   - message: what failed, with the values that show it.
public func fuzzRequire(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("property failed: \(message())") }
}
