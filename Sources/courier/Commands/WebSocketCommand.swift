import Courier
import Foundation

/// `courier ws://HOST/PATH [options]` (or `wss://`): a WebSocket between standard input and
/// standard output.
///
/// Each line of standard input is sent as a text message (binary with `--binary`) and each message
/// received is printed as it arrives (``WebSocketPrinter``). The end of standard input closes the
/// WebSocket with 1000 (unless `--keep-open`) and, once the server has answered the close, exits 0;
/// messages the server sends before it answers are still printed. A server that closes with 1000, 1001 or
/// no code ends the command with 0 too, and with any other code with 101 (the code and reason are
/// printed). Ctrl-C closes with 1001 and exits 130.
struct WebSocketCommand {
    let options: WebSocketOptions
    let interrupts: Interrupts
    let console: Console

    /// Opens the WebSocket, relays messages until either side closes, and returns the exit status.
    func run() async -> ExitCode {
        if options.connection.insecure { message(ConnectionOptions.insecureWarning) }
        let configuration = makeConfiguration()
        do {
            try configuration.validate()
        } catch {
            return fail(with: error)
        }
        let session = Session(
            configuration: configuration,
            headers: [HTTPHeader.userAgent("courier/\(Courier.version)")],
            callbackQueue: DispatchQueue(label: "courier.callbacks"))
        var socketConfiguration = WebSocketConfiguration()
        socketConfiguration.offersCompression = options.compression
        if let seconds = options.pingInterval { socketConfiguration.pingInterval = .milliseconds(Int64((seconds * 1000).rounded(.up))) }
        let socket = session.webSocket(
            options.url, protocols: options.subprotocols,
            headers: HTTPHeaders(options.headers.map { HTTPHeader(name: $0.name, value: $0.value) }),
            configuration: socketConfiguration)
        interrupts.onInterrupt { socket.cancel() }
        if options.verbose { console.message("* connecting to \(options.url.absoluteString)") }
        do {
            try await socket.connect()
        } catch {
            // A server may open and close at once (a message, then its close): connect() then
            // reports the close, but the socket did open and its messages are still to be read,
            // and the close's code decides the exit status below. Only a socket that never opened
            // (closed with no close status) has failed here.
            guard socket.state == .closing || socket.closeStatus != nil else {
                interrupts.clearHandler()
                return fail(with: Self.courierError(error))
            }
        }
        if options.verbose {
            console.message(
                "* WebSocket open" + (socket.subprotocol.map { ", subprotocol: \($0)" } ?? ", no subprotocol")
                    + (socket.isCompressed ? ", permessage-deflate" : ""))
        }
        let sender = Task { [binary = options.binary, keepOpen = options.keepOpen, console] () -> CourierError? in
            var lines = InputLines()
            var number = 0
            while let line = await lines.next() {
                number += 1
                do {
                    try await socket.send(Self.message(line, binary: binary, number: number, console: console))
                } catch {
                    return Self.courierError(error)
                }
            }
            // End of input: close with 1000 and wait for the server's close (messages then ends);
            // with --keep-open, go on printing until the server closes or Ctrl-C.
            if !keepOpen { try? await socket.close(code: .normalClosure) }
            return nil
        }
        let printer = WebSocketPrinter(console: console, rawBinary: options.binary)
        var failure: CourierError?
        var writeFailed = false
        do {
            for try await message in socket.messages where !printer.print(message) {
                writeFailed = true
                socket.cancel()
                break
            }
        } catch {
            failure = Self.courierError(error)
        }
        interrupts.clearHandler()
        sender.cancel()
        if failure == nil, socket.state != .closed, !writeFailed {
            // The messages ended without the socket closing: a send failed first (its error says why).
            failure = await sender.value
        }
        if options.verbose, let status = socket.closeStatus {
            console.message("* closed: \(status.code.rawValue)" + (status.reason.isEmpty ? "" : " \(status.reason)"))
        }
        if interrupts.wasInterrupted {
            message("courier: interrupted")
            return .interrupted
        }
        if writeFailed { return .writeError }
        if let failure { return fail(with: failure) }
        return .success
    }

    /// The session configuration the options ask for: transport and TLS.
    func makeConfiguration() -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        switch options.transport {
        case .curl: configuration.transport = .curl
        case .urlsession: configuration.transport = .urlSession(.ephemeral)
        case nil: break
        }
        configuration.cookies = .none
        configuration.tls = options.connection.tlsConfiguration(host: options.url.host ?? "")
        return configuration
    }

    /// A line of standard input as a message: text, or binary with `--binary` or when the line is
    /// not UTF-8 (a warning says so).
    static func message(_ line: Data, binary: Bool, number: Int, console: Console) -> WebSocketMessage {
        if binary { return .binary(line) }
        guard let text = String(data: line, encoding: .utf8) else {
            console.message("courier: warning: line \(number) of standard input is not UTF-8: sent as a binary message")
            return .binary(line)
        }
        return .text(text)
    }

    /// `error` as Courier's error (the WebSocket only throws those).
    static func courierError(_ error: any Error) -> CourierError {
        error as? CourierError ?? CourierError(wrapping: error)
    }

    /// Prints a line to standard error unless `-s` (without `-S`) silenced errors.
    func message(_ line: String) {
        if options.showsErrors { console.message(line) }
    }

    /// The exit status and message for a WebSocket that failed with `error`.
    func fail(with error: CourierError) -> ExitCode {
        if error.isCancelled, interrupts.wasInterrupted {
            message("courier: interrupted")
            return .interrupted
        }
        let report = ErrorReport(error)
        if options.showsErrors || options.verbose { report.lines(verbose: options.verbose).forEach(console.message) }
        return report.exitCode
    }
}
