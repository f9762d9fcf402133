import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// No body and no `-o`: streams the response to standard output as it arrives.
    ///
    /// Piped or redirected output is written chunk by chunk, so a slow reader holds the transfer
    /// back (Courier's backpressure) and memory stays bounded whatever the body's size. On a
    /// terminal the body is collected (appended in place, see ``StreamedBody``) to be formatted, up
    /// to ``BodyPrinter/formattingLimit``; a larger body is written as it is, as it arrives.
    ///
    /// An event stream (`text/event-stream`) is written as its bytes too, unless standard output is
    /// a terminal or `--events` asks for it: then it is printed event by event, formatted, and
    /// reconnected when it ends (``followEventStream(after:)``).
    func printBody() async -> ExitCode {
        let request = session.streamRequest(options.url, method: method, headers: requestHeaders()).sharesConnectionsAsAnyRequest()
        prepare(request)
        let console = console
        var body = StreamedBody(collecting: console.stdoutIsTerminal, limit: BodyPrinter.formattingLimit) { console.out($0) }
        var iterator = request.streamingData().makeAsyncIterator()
        var failure: CourierError?
        var received: Int64 = 0
        // Set at the first chunk when the response is an event stream printed event by event.
        var events: EventPrinter?
        var checkedType = false
        let formatsEvents = options.events ?? console.stdoutIsTerminal
        do throws(CourierError) {
            while let chunk = try await iterator.next() {
                received += Int64(chunk.count)
                if let limit = options.maxFileSize, received > limit {
                    // A stream has no size limit of Courier's: --max-filesize counts here.
                    stop.withLock { $0 = .tooLarge(received) }
                    request.cancel()
                    break
                }
                if !checkedType {
                    checkedType = true
                    if formatsEvents, Self.isEventStream(await request.response) { events = EventPrinter(console: console) }
                }
                let written = try events?.consume(chunk) ?? body.consume(chunk)
                if !written {
                    request.cancel()
                    break
                }
            }
        } catch {
            failure = error
        }
        interrupts.clearHandler(slot: index)
        if var printer = events, !printer.writeFailed, options.reconnects, method.isIdempotent, !interrupts.wasInterrupted,
            failure.map({ !$0.isCancelled }) ?? true
        {
            // An event stream reconnects as EventSource does, after the server's retry, from the last event id.
            if let failure, options.verbose { console.message("* the event stream's connection ended: \(failure.message)") }
            return await followEventStream(after: &printer)
        }
        let metrics = await request.metrics
        let response = await request.response
        let lastURL = await request.lastRequest?.url
        reportMetrics(metrics)
        var status = ExitCode.success
        if let failure = failure ?? (stop.withLock({ $0 }) == nil ? nil : CourierError(.cancelled, "stopped")) {
            status = fail(with: failure)
        } else if body.writeFailed || events?.writeFailed == true {
            status = .writeError
        } else if let collected = body.finish() {
            status = BodyPrinter(console: console).print(data: collected, contentType: response?.value(forHTTPHeaderField: "Content-Type"))
        }
        if status == .success, let failed = failedStatus(response) { status = failed }
        return finish(status, response: response, metrics: metrics, bodyBytes: received, lastURL: lastURL, error: failure)
    }

    /// `1.5 s`.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Whether `response` is a Server-Sent Events stream.
    static func isEventStream(_ response: HTTPURLResponse?) -> Bool {
        guard let type = response?.value(forHTTPHeaderField: "Content-Type") else { return false }
        return type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream"
    }

    /// Reconnects an event stream whose first connection ended (after the server's `retry:`, or
    /// 3 s) and prints its events until the server ends it (a 204), it fails for good, or Ctrl-C.
    func followEventStream(after printer: inout EventPrinter) async -> ExitCode {
        let delay = printer.parser.reconnectionTime.map { Duration.milliseconds($0) } ?? .seconds(3)
        if options.verbose {
            console.message("* reconnecting in \(Self.seconds(delay)) with Last-Event-ID: \(printer.parser.lastEventID ?? "(none)")")
        }
        let wait = Task { try? await Task.sleep(for: delay) }
        interrupts.onInterrupt(slot: index) { wait.cancel() }
        await wait.value
        interrupts.clearHandler(slot: index)
        guard !interrupts.wasInterrupted else {
            message("courier: interrupted")
            return .interrupted
        }
        let stream = session.eventStream(
            options.url, method: method, headers: requestHeaders(),
            lastEventID: printer.parser.lastEventID)
        interrupts.onInterrupt(slot: index) { stream.cancel() }
        var failure: CourierError?
        do throws(CourierError) {
            for try await update in stream.updates() {
                switch update {
                case .event(let event):
                    printer.print(event)
                    if printer.writeFailed { stream.cancel() }
                case .reconnecting(let attempt):
                    if options.verbose {
                        console.message(
                            "* reconnecting in \(Self.seconds(attempt.delay)) (attempt \(attempt.attempt)) with Last-Event-ID: \(attempt.lastEventID ?? "(none)")"
                                + (attempt.reason.map { ": \($0.message)" } ?? ""))
                    }
                case .connected(let response):
                    if options.verbose { console.message("* connected: \(response.statusCode)") }
                }
            }
        } catch {
            failure = error
        }
        interrupts.clearHandler(slot: index)
        if printer.writeFailed { return .writeError }
        if let failure { return fail(with: failure) }
        return .success
    }
}
