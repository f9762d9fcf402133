/// A mistake on the command line: printed as one line plus a hint, exit status 2.
struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, e.g. `unknown option '--foo'`.
    let message: String
    /// The command whose help to point at (`courier help <command>`); nil for the top level.
    let command: String?

    init(_ message: String, command: String? = "fetch") {
        self.message = message
        self.command = command
    }

    /// The hint line printed after the message.
    var hint: String {
        guard let command else { return "Run 'courier --help' for usage." }
        return "Run 'courier help \(command)' for usage."
    }

    /// `courier: <message>`.
    var description: String { "courier: \(message)" }
}
