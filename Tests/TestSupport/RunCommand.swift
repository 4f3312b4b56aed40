import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs `executable` with `arguments` (output discarded) and returns its exit status, polling
/// `waitpid` without blocking a thread. Unlike `Process`, it does not depend on a SIGCHLD
/// monitor, so a command that leaves a daemon behind (`pg_ctl start`) is reaped reliably.
public func runCommand(_ executable: String, _ arguments: [String]) async throws -> Int32 {
    try await runCommand(executable, arguments, standardOutput: "/dev/null")
}

/// Runs `executable` (looked up on `PATH` when it has no slash) and returns what it printed on
/// standard output; throws when it exits with another status than 0.
public func runCommandOutput(_ executable: String, _ arguments: [String]) async throws -> String {
    let output = NSTemporaryDirectory() + "rtdb-command-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: output) }
    let status = try await runCommand(executable, arguments, standardOutput: output)
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    guard status == 0 else { throw SupportFailure("\(executable) exited with \(status): \(text)") }
    return text
}

private func runCommand(_ executable: String, _ arguments: [String], standardOutput: String) async throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw SupportFailure("cannot run \(executable): error \(spawned)") }
    var status: Int32 = 0
    while true {
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { break }
        if result < 0 { throw SupportFailure("waitpid failed for \(executable): errno \(errno)") }
        try await Task.sleep(for: .milliseconds(20))
    }
    // WIFEXITED / WEXITSTATUS, spelled out (the macros do not import).
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -(status & 0x7f)
}
