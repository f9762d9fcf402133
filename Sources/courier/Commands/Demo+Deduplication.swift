import Courier
import CourierTestServer
import Foundation

extension Demo {
    /// Step 4: ten identical GETs in flight at once share one transfer (`deduplication: .safeMethods`);
    /// the server's request count and the deduplicator's statistics show it.
    @Sendable static func deduplicationStep(_ context: DemoContext) async -> Bool {
        let path = "/api/feed"
        let body = #"{"items":[{"id":1,"title":"Courier 0.1"},{"id":2,"title":"Resumable downloads"}]}"#
        let gate = Gate()
        context.server.route(path) { _ in .json(body).waiting(for: gate) }
        let session = makeSession(deduplication: .safeMethods)
        let url = context.server.url(path)
        let started = ContinuousClock.now

        let tasks = (0..<10).map { _ in
            let request = session.request(url)
            return Task { await request.serializingString().response }
        }
        // The server holds its answer until all ten callers are attached to the one transfer.
        let lined = await gate.waitUntilWaiting(count: 1, timeout: .seconds(5))
        let joined = await waitUntil(timeout: .seconds(5)) { session.deduplicator.statistics.joined >= 9 }
        gate.open()
        var values: [String] = []
        for task in tasks {
            if let value = await task.value.value { values.append(value) }
        }
        let elapsed = (ContinuousClock.now - started).seconds
        let statistics = session.deduplicator.statistics
        let requests = context.server.requestCount(path: path)
        let identical = values.count == 10 && Set(values).count == 1 && values.first == body
        context.say("10 identical GET \(path) in flight → the server saw \(requests) request\(requests == 1 ? "" : "s")")
        context.say("deduplicator statistics: \(statistics)")
        let sent = context.server.bytesSent(path: path)
        context.say(
            "\(values.count) responses, \(identical ? "all identical" : "NOT identical") "
                + "(\(body.utf8.count) bytes each; the server sent \(sent) body bytes in all), in \(Units.elapsed(elapsed))")
        return lined && joined && identical && requests == 1 && statistics.transfers == 1 && statistics.joined == 9
            && sent == Int64(body.utf8.count)
    }
}
