import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// No body and no `-o`: streams the response to standard output as it arrives.
    ///
    /// Piped output is written chunk by chunk, so a slow reader holds the transfer back
    /// (Courier's backpressure) and memory stays bounded. On a terminal the body is collected to be
    /// formatted, up to ``BodyPrinter/formattingLimit``; beyond that it is written as it is.
    func printBody(session: Session) async -> ExitCode {
        let request = session.streamRequest(options.url, method: method, headers: requestHeaders())
        if options.failOnHTTPError { request.validate(statusCode: 0..<400) }
        cancelOnInterrupt(request)
        let printer = BodyPrinter(console: console)
        var collected: Data? = console.stdoutIsTerminal ? Data() : nil
        var iterator = request.streamingData().makeAsyncIterator()
        var failure: CourierError?
        var writeFailed = false
        do throws(CourierError) {
            while let chunk = try await iterator.next() {
                if var buffer = collected {
                    buffer.append(chunk)
                    if Int64(buffer.count) > BodyPrinter.formattingLimit {
                        // Too big to format: everything so far and everything after goes out as it is.
                        collected = nil
                        writeFailed = writeFailed || !console.out(buffer)
                    } else {
                        collected = buffer
                    }
                } else {
                    writeFailed = writeFailed || !console.out(chunk)
                }
                if writeFailed {
                    request.cancel()
                    break
                }
            }
        } catch {
            failure = error
        }
        interrupts.clearHandler()
        reportMetrics(await request.metrics)
        if let failure { return fail(with: failure) }
        if writeFailed { return .failure }
        if let collected {
            return printer.print(data: collected, contentType: await request.response?.value(forHTTPHeaderField: "Content-Type"))
        }
        return .success
    }
}
