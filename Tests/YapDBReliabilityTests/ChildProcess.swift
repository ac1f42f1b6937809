#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The crash child (`Tests/YapDBCrashChild`), spawned by `posix_spawn` with its standard output
/// on a pipe. The executable sits next to the test binary (`.build/debug/`).
final class ChildProcess {
    let pid: pid_t
    private let output: Int32
    private let input: Int32
    private var pending: [UInt8] = []
    private(set) var exited = false
    /// Whether `closeInput()` closed the input pipe: it is never closed twice (a descriptor
    /// number closed twice may by then be another test's pipe, run in parallel).
    private var inputClosed = false

    /// The child's executable: beside the running test binary.
    static var executable: String {
        let test = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: test).deletingLastPathComponent().appendingPathComponent("YapDBCrashChild").path
    }

    /// A program of this package built beside the test binary (`.build/debug/NAME`).
    static func builtProgram(_ name: String) -> String {
        URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Starts the child with `arguments`; its stdin and stdout are pipes, stderr is inherited.
    /// `executable` is the crash child unless given (another program built beside the tests,
    /// such as `yapdb`: `ChildProcess.builtProgram("yapdb")`). `environment` adds variables to
    /// the inherited ones; `mergingErrors` sends its stderr into the stdout pipe as well.
    init(_ arguments: [String], executable: String = ChildProcess.executable, environment: [String: String] = [:],
         mergingErrors: Bool = false) throws {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        if mergingErrors { posix_spawn_file_actions_adddup2(&actions, fromChild[1], 2) }
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var inherited = ProcessInfo.processInfo.environment
        inherited.merge(environment) { _, given in given }
        let envp = environment.isEmpty ? nil : inherited.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp ?? [] { free(pointer) } }
        var child = pid_t()
        let status = envp.map { envp in posix_spawn(&child, executable, &actions, nil, argv, envp) }
            ?? posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard status == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .ENOENT)
        }
        pid = child
        input = toChild[1]
        output = fromChild[0]
    }

    /// The next complete line the child wrote, waiting at most `timeout` seconds; nil on
    /// timeout or end of output.
    func readLine(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, readMore(waitingMilliseconds: Int32(left * 1000)) else { return nil }
        }
    }

    /// Reads what is available within the wait; false at end of output or timeout.
    private func readMore(waitingMilliseconds: Int32) -> Bool {
        var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, max(0, waitingMilliseconds)) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        pending += buffer[..<count]
        return true
    }

    /// Every complete line still in the pipe, up to the end of output (call after the child
    /// died, so the pipe's write end is closed).
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = readLine(timeout: 5) { lines.append(line) }
        return lines
    }

    /// Sends SIGKILL and reaps the child.
    func kill() {
        _ = Glibc.kill(pid, SIGKILL)
        _ = waitForExit()
    }

    /// Writes `line` and a newline to the child's standard input. A child that died makes
    /// the write fail with `EPIPE` (SIGPIPE is ignored in this process from the first call).
    func send(_ line: String) {
        guard !inputClosed else { return }
        _ = signal(SIGPIPE, SIG_IGN)
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    /// Closes the child's standard input (the `hold` command's signal to exit).
    func closeInput() {
        guard !inputClosed else { return }
        inputClosed = true
        close(input)
    }

    /// Waits for the child to end; returns its wait status.
    @discardableResult
    func waitForExit() -> Int32 {
        guard !exited else { return 0 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exited = true
        return status
    }

    deinit {
        if !exited { kill() }
        closeInput()
        close(output)
    }
}
