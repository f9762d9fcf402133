/// A mistake on the command line, or a problem found before any request: a usage error is printed
/// as one line plus a hint (exit status 2); any other (an unsupported scheme, an unreadable file)
/// as `courier: (N) message`, N being its exit status, as curl prints its errors.
struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, e.g. `unknown option '--foo'`.
    let message: String
    /// The command whose help to point at (`courier help <command>`); nil for the top level.
    let command: String?
    /// The exit status: ``ExitCode/usage`` for a mistake on the command line.
    let exitCode: ExitCode

    init(_ message: String, command: String? = "fetch", exitCode: ExitCode = .usage) {
        self.message = message
        self.command = command
        self.exitCode = exitCode
    }

    /// The hint line printed after a usage error's message; nil for other problems.
    var hint: String? {
        guard exitCode == .usage else { return nil }
        guard let command else { return "Run 'courier --help' for usage." }
        return "Run 'courier help \(command)' for usage."
    }

    /// `courier: <message>`, or `courier: (N) <message>` when the status is not 2.
    var description: String {
        exitCode == .usage ? "courier: \(message)" : "courier: (\(exitCode.rawValue)) \(message)"
    }
}
