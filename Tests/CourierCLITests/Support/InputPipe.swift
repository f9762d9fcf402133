import CourierLocking
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child's standard input that a test writes to line by line and then ends, as a person typing
/// and pressing Ctrl-D would. A socket pair rather than a pipe: writes use `MSG_NOSIGNAL`, so a
/// child that has already exited cannot kill the test process with SIGPIPE.
final class InputPipe: Sendable {
    /// The child's end, until ``startedChild()`` closes this process's copy (nil then).
    private let childEnd: Locked<Int32?>
    private let testEnd: Int32

    init() throws {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
            throw HarnessError("socketpair: errno \(errno)")
        }
        childEnd = Locked(ends[0])
        testEnd = ends[1]
    }

    /// Starts `courier arguments...` with this as its standard input.
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> CLIProcess {
        defer { closeChildEnd() }
        guard let descriptor = childEnd.withLock({ $0 }) else { throw HarnessError("InputPipe: already used") }
        return try CLIProcess(arguments, environment: environment, stdin: .descriptor(descriptor))
    }

    /// Starts any executable (`script`) the same way.
    func start(executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> CLIProcess {
        defer { closeChildEnd() }
        guard let descriptor = childEnd.withLock({ $0 }) else { throw HarnessError("InputPipe: already used") }
        return try CLIProcess(executable: executable, arguments, environment: environment, stdin: .descriptor(descriptor))
    }

    /// Closes this process's copy of the child's end (the child has its own).
    private func closeChildEnd() {
        if let descriptor = childEnd.withLock({ end -> Int32? in
            defer { end = nil }; return end
        }) {
            close(descriptor)
        }
    }

    /// Writes `text` (add the newline yourself); false when the child is gone.
    @discardableResult
    func write(_ text: String) -> Bool {
        write(Data(text.utf8))
    }

    /// Writes `data`; false when the child is gone.
    @discardableResult
    func write(_ data: Data) -> Bool {
        let bytes = Array(data)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(testEnd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Ends the input: the child reads end of file.
    func end() {
        shutdown(testEnd, Int32(SHUT_WR))
    }

    deinit {
        closeChildEnd()
        close(testEnd)
    }
}
