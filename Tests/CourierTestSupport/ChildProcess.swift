import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for tests, started with `posix_spawn`.
///
/// Foundation's `Process` is not used: on Linux its `run()` lists `/proc/self/fd` and copies each
/// entry's full 256-byte `d_name`, reading past the end of the directory buffer when the test
/// process has ~1,300 or more descriptors open (hundreds of parallel tests do), which crashed a CI
/// run with SIGSEGV. Here standard streams are opened by the child itself (no descriptors in the
/// parent), every other descriptor is closed in the child, and the child starts with no blocked
/// signals and default dispositions, so SIGINT and SIGTERM reach it.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated (for output) or read (for input).
        case file(String)
        /// A descriptor of the parent's, duplicated into the child (the caller keeps and closes it).
        case descriptor(Int32)
    }

    /// How a child ended.
    public struct Exit: Sendable, Equatable {
        /// The exit status, or the signal number when ``signalled`` is true.
        public let status: Int32
        /// Whether a signal ended the process.
        public let signalled: Bool

        /// An exit with `status` (or by signal `status` when `signalled`).
        public init(status: Int32, signalled: Bool) {
            self.status = status
            self.signalled = signalled
        }
    }

    /// The process id.
    public let pid: pid_t
    /// The executable and arguments, for messages.
    public let commandLine: String
    private let exit = ExitSignal()

    /// Starts `executable` with `arguments`; `environment` replaces the parent's when given.
    public init(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        currentDirectory: String? = nil, stdin: Stream = .null, stdout: Stream = .null,
        stderr: Stream = .null
    ) throws {
        commandLine = ([executable] + arguments).joined(separator: " ")
        pid = try Spawn.start(
            executable: executable, arguments: arguments, environment: environment,
            currentDirectory: currentDirectory, streams: [stdin, stdout, stderr])
        let exit = exit
        let pid = pid
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            // WIFSIGNALED / WEXITSTATUS, written out: the C macros are not imported.
            let signal = status & 0x7F
            if signal != 0 && signal != 0x7F {
                exit.fire(Exit(status: signal, signalled: true))
            } else {
                exit.fire(Exit(status: (status >> 8) & 0xFF, signalled: false))
            }
        }
        reaper.name = "child-reaper"
        reaper.start()
    }

    /// Starts `/bin/sh -c command`.
    public convenience init(shell command: String, stdout: Stream = .null, stderr: Stream = .null) throws {
        try self.init(executable: "/bin/sh", arguments: ["-c", command], stdout: stdout, stderr: stderr)
    }

    /// Sends `signal` to the child (ignored once it has been reaped).
    public func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { exit.outcome == nil }

    /// How the child ended, or nil if `timeout` passed first.
    public func wait(timeout: Duration) async -> Exit? {
        await exit.wait(timeout: timeout)
    }

    /// Blocks the calling thread until the child has ended (for `deinit`-like clean-up paths).
    public func waitUntilExit() -> Exit {
        exit.waitBlocking()
    }

    deinit {
        if exit.outcome == nil { kill(pid, SIGKILL) }
    }
}

/// The `posix_spawn` call and its file actions.
private enum Spawn {
    static func start(
        executable: String, arguments: [String], environment: [String: String]?,
        currentDirectory: String?, streams: [ChildProcess.Stream]
    ) throws -> pid_t {
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #endif
        try check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check(posix_spawnattr_init(&attributes), "posix_spawnattr_init")
        defer { posix_spawnattr_destroy(&attributes) }

        for (target, stream) in streams.enumerated() {
            let target = Int32(target)
            switch stream {
            case .null:
                try check(
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0),
                    "addopen /dev/null")
            case .file(let path):
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                try check(posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o644), "addopen \(path)")
            case .descriptor(let descriptor):
                try check(posix_spawn_file_actions_adddup2(&actions, descriptor, target), "adddup2")
            }
        }
        try closeOtherDescriptors(&actions)
        if let currentDirectory {
            try changeDirectory(&actions, currentDirectory)
        }

        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        try check(posix_spawnattr_setsigmask(&attributes, &noSignals), "setsigmask")
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        try check(posix_spawnattr_setsigdefault(&attributes, &defaults), "setsigdefault")
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        try check(posix_spawnattr_setflags(&attributes, Int16(flags)), "setflags")

        let argv = ([executable] + arguments).map { strdup($0) }
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        var argvList = argv + [nil]
        var envpList = envp + [nil]
        let status = posix_spawn(&pid, executable, &actions, &attributes, &argvList, &envpList)
        try check(status, "posix_spawn \(executable)")
        return pid
    }

    #if canImport(Glibc)
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    // glibc has both since 2.34 / 2.29, but Swift's Glibc module does not declare them (_GNU_SOURCE).
    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }

    private static func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) throws {
        guard let closeFrom = symbol("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self) else {
            throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later is needed)")
        }
        try check(closeFrom(&actions, 3), "addclosefrom")
    }

    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, _ path: String) throws {
        guard let chdir = symbol("posix_spawn_file_actions_addchdir_np", as: ChangeDirectory.self) else {
            throw SpawnError(description: "posix_spawn_file_actions_addchdir_np is missing (glibc 2.29 or later is needed)")
        }
        try check(chdir(&actions, path), "addchdir")
    }
    #else
    private static func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t?) throws {
        // POSIX_SPAWN_CLOEXEC_DEFAULT (set on the attributes) closes them on Darwin.
    }

    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t?, _ path: String) throws {
        try check(posix_spawn_file_actions_addchdir_np(&actions, path), "addchdir")
    }
    #endif

    private static func check(_ status: Int32, _ what: String) throws {
        guard status == 0 else { throw SpawnError(description: "\(what) failed: \(String(cString: strerror(status)))") }
    }
}

/// A child process could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    /// What failed and why.
    public let description: String
}

/// A one-shot "the process exited" event, awaited by tasks with a timeout or by a blocked thread.
final class ExitSignal: Sendable {
    private struct State {
        var outcome: ChildProcess.Exit?
        var waiters: [UInt64: CheckedContinuation<ChildProcess.Exit?, Never>] = [:]
        var expired: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = TestLock(State())
    private let ended = DispatchGroup()

    init() { ended.enter() }

    var outcome: ChildProcess.Exit? { state.withLock { $0.outcome } }

    func fire(_ outcome: ChildProcess.Exit) {
        let waiters = state.withLock { state -> [CheckedContinuation<ChildProcess.Exit?, Never>] in
            state.outcome = outcome
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        ended.leave()
        waiters.forEach { $0.resume(returning: outcome) }
    }

    func waitBlocking() -> ChildProcess.Exit {
        ended.wait()
        // fire() stored the outcome before leaving the group.
        return state.withLock { $0.outcome } ?? ChildProcess.Exit(status: -1, signalled: false)
    }

    func wait(timeout: Duration) async -> ChildProcess.Exit? {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            enum Ready { case outcome(ChildProcess.Exit), expired, waiting }
            let ready = state.withLock { state -> Ready in
                if let outcome = state.outcome { return .outcome(outcome) }
                if state.expired.remove(id) != nil { return .expired }
                state.waiters[id] = continuation
                return .waiting
            }
            switch ready {
            case .outcome(let outcome): continuation.resume(returning: outcome)
            case .expired: continuation.resume(returning: nil)
            case .waiting: break
            }
        }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<ChildProcess.Exit?, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                if state.outcome == nil { state.expired.insert(id) }
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: nil)
    }
}
