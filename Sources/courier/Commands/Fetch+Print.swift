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
    func printBody(session: Session) async -> ExitCode {
        // The tool runs one request at a time: its stream can share an HTTP/2 connection.
        let request = session.streamRequest(options.url, method: method, headers: requestHeaders()).sharesConnectionsAsAnyRequest()
        if let acceptable = acceptableStatusCodes { request.validate(statusCode: acceptable) }
        cancelOnInterrupt(request)
        let console = console
        var body = StreamedBody(collecting: console.stdoutIsTerminal, limit: BodyPrinter.formattingLimit) { console.out($0) }
        var iterator = request.streamingData().makeAsyncIterator()
        var failure: CourierError?
        var received: Int64 = 0
        do throws(CourierError) {
            while let chunk = try await iterator.next() {
                received += Int64(chunk.count)
                if !body.consume(chunk) {
                    request.cancel()
                    break
                }
            }
        } catch {
            failure = error
        }
        interrupts.clearHandler()
        let metrics = await request.metrics
        let response = await request.response
        let lastURL = await request.lastRequest?.url
        reportMetrics(metrics)
        var status = ExitCode.success
        if let failure {
            status = fail(with: failure)
        } else if body.writeFailed {
            status = .writeError
        } else if let collected = body.finish() {
            status = BodyPrinter(console: console).print(data: collected, contentType: response?.value(forHTTPHeaderField: "Content-Type"))
        }
        return finish(status, response: response, metrics: metrics, bodyBytes: received, lastURL: lastURL, error: failure)
    }
}
