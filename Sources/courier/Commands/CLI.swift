import CourierSupport
import Foundation

/// Routes a command line to its command and turns usage errors into exit status 2.
enum CLI {
    /// Runs `courier` with `arguments` (without the program name) and returns the exit status.
    static func run(
        _ arguments: [String], environment: [String: String], interrupts: Interrupts,
        console: Console = .shared
    ) async -> ExitCode {
        do {
            return try await dispatch(arguments, environment: environment, interrupts: interrupts, console: console)
        } catch {
            console.message(error.description)
            if let hint = error.hint { console.message(hint) }
            return error.exitCode
        }
    }

    private static func dispatch(
        _ arguments: [String], environment: [String: String], interrupts: Interrupts,
        console: Console
    ) async throws(UsageError) -> ExitCode {
        guard let first = arguments.first else {
            throw UsageError("missing URL", command: nil)
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help":
            console.out(Help.main + "\n")
            return .success
        case "-V", "--version":
            console.out(VersionText.text() + "\n")
            return .success
        case "help":
            return try help(rest, console: console)
        case "--generate-completion-script":
            guard rest.count == 1, let shell = CompletionScript.Shell(rawValue: rest[0]) else {
                throw UsageError("--generate-completion-script needs one shell: bash, zsh or fish", command: nil)
            }
            console.out(CompletionScript.script(for: shell))
            return .success
        case "demo":
            let parsed = try ArgumentParser.parse(rest, options: Demo.options, command: "demo")
            if parsed.has("help") {
                console.out(Help.demo + "\n")
                return .success
            }
            if let extra = parsed.positionals.first { throw UsageError("unexpected argument '\(extra)'", command: "demo") }
            return await Demo(console: console, interrupts: interrupts).run()
        case "fetch":
            return try await fetch(rest, environment: environment, interrupts: interrupts, console: console)
        default:
            if WebSocketOptions.isWebSocketCommand(arguments) {
                return try await webSocket(arguments, interrupts: interrupts, console: console)
            }
            return try await fetch(arguments, environment: environment, interrupts: interrupts, console: console)
        }
    }

    private static func help(_ arguments: [String], console: Console) throws(UsageError) -> ExitCode {
        let parsed = try ArgumentParser.parse(
            arguments, options: [OptionSpec("help", short: "h", long: "help", help: "")],
            command: "help")
        if parsed.has("help") {
            console.out(Help.help + "\n")
            return .success
        }
        guard parsed.positionals.count <= 1 else {
            throw UsageError("unexpected argument '\(parsed.positionals[1])'", command: "help")
        }
        guard let text = Help.text(for: parsed.positionals.first) else {
            throw UsageError(
                "no command '\(parsed.positionals[0])' (commands: \(Help.commands.joined(separator: ", ")))",
                command: "help")
        }
        console.out(text + "\n")
        return .success
    }

    private static func webSocket(_ arguments: [String], interrupts: Interrupts, console: Console) async throws(UsageError) -> ExitCode {
        let parsed = try ArgumentParser.parse(arguments, options: WebSocketOptions.parserOptions, command: "ws")
        if parsed.has("help") {
            console.out(Help.webSocket + "\n")
            return .success
        }
        let options = try WebSocketOptions.make(from: parsed)
        do {
            try options.connection.checkFiles()
        } catch {
            guard error.exitCode != .usage, !options.showsErrors else { throw error }
            return error.exitCode
        }
        return await WebSocketCommand(options: options, interrupts: interrupts, console: console).run()
    }

    private static func fetch(
        _ arguments: [String], environment: [String: String], interrupts: Interrupts,
        console: Console
    ) async throws(UsageError) -> ExitCode {
        let expand = FetchOptions.configExpander(readFile: FetchOptions.readFileFromDisk) { console.message($0) }
        let parsed = try ArgumentParser.parse(arguments, options: FetchOptions.options, command: "fetch", expand: expand)
        if FetchOptions.wantsHelp(parsed) {
            console.out(Help.fetch + "\n")
            return .success
        }
        let options: FetchOptions
        do {
            options = try FetchOptions.make(from: parsed, environment: environment)
            try options.connection.checkFiles()
        } catch {
            // Problems found before the request are errors like the request's: -s hides them.
            guard error.exitCode != .usage, parsed.has("silent"), !parsed.has("show-error") else { throw error }
            return error.exitCode
        }
        return await FetchBatch(options: options, interrupts: interrupts, console: console).run()
    }
}
