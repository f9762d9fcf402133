import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// The URLSession transfer lifecycle as event → action tables, without I/O: every legal order of
/// delegate callbacks and caller verbs, and the late or illegal ones.
@Suite("URLSession transfer state machine")
struct URLSessionTransferStateTests {
    /// Stands in for a `URLSessionTask`; compared by identity, named for readable tables.
    final class FakeTask: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    typealias Machine = URLSessionTransferState<FakeTask>
    typealias Event = Machine.Event

    static let url = URL(string: "http://example.test/file")!
    let t1 = FakeTask("t1")
    let t2 = FakeTask("t2")

    // MARK: - Table helpers

    /// A response head with `status` and `headers`.
    static func head(_ status: Int, _ headers: [(String, String)] = []) -> ResponseHead {
        ResponseHead(statusCode: status, fields: headers.map { (name: $0.0, value: $0.1) }, url: url, httpVersion: "HTTP/1.1")
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }

    /// A readable summary of an end.
    static func describe(_ end: Machine.End) -> String {
        switch end {
        case .succeeded: "succeeded"
        case .taskFailed(let error, let afterHead):
            "failed(\((error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(error)"), \(afterHead ? "after head" : "before head"))"
        case .noResponse: "noResponse"
        case .cancelled: "cancelled"
        case .timedOut(.idle(let limit)): "timedOut(idle \(limit))"
        case .timedOut(.deadline): "timedOut(deadline)"
        case .timedOut(.tooSlow(let rate, let moved)): "timedOut(tooSlow \(rate), \(moved) bytes)"
        case .notHTTP: "notHTTP"
        case .bodyBeforeHead: "bodyBeforeHead"
        case .resumeRejected(.wrongRange(let range, let offset)): "resumeRejected(range \(range ?? "none") for \(offset))"
        case .resumeRejected(.resourceChanged): "resumeRejected(changed)"
        case .resumeRejected(.status(let status)): "resumeRejected(status \(status))"
        case .rejected(let error): "rejected(\(error.kind))"
        }
    }

    /// A readable summary of an action, so tables compare plain strings.
    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .startTask(nil): "startTask(fresh)"
        case .startTask(let continuation?):
            "startTask(from \(continuation.offset)\(continuation.validator.map { ", If-Range \($0)" } ?? ""))"
        case .cancelTask(let task): "cancelTask(\(task.name))"
        case .deliver(.uploadProgress(let sent, let total)): "upload \(sent)/\(total)"
        case .deliver(.response(let head)): "response \(head.statusCode)"
        case .deliver(.body(let data)): "body \(String(decoding: data, as: UTF8.self))"
        case .finish(let end): "finish(\(describe(end)))"
        }
    }

    /// Feeds `events` to a fresh machine: one line per event ("—" for no action), and the machine.
    static func run(_ events: [Event], restarting: Bool = true) -> ([String], Machine) {
        var machine = Machine(pausesByRestarting: restarting)
        let steps = events.map { event in
            let actions = machine.handle(event)
            return actions.isEmpty ? "—" : actions.map(describe).joined(separator: ", ")
        }
        return (steps, machine)
    }

    /// The events that start `task` on a fresh machine.
    func started(_ task: FakeTask) -> [Event] { [.start, .taskStarted(task)] }

    /// A GET that received a head with a validator and three body bytes on `t1`.
    var threeBytesIn: [Event] {
        started(t1) + [
            .responseReceived(t1, Self.head(200, [("ETag", "\"v1\""), ("Content-Length", "5")])),
            .dataReceived(t1, Self.data("abc")),
        ]
    }

    // MARK: - Legal orders

    @Test("start asks for a fresh task; the started task runs")
    func start() {
        let (steps, machine) = Self.run(started(t1))
        #expect(steps == ["startTask(fresh)", "—"])
        #expect(machine.isCurrent(t1))
        #expect(!machine.isCurrent(t2))
        #expect(machine.idleClockRuns)
    }

    @Test("response, body chunks, completion: delivered in order, then finish")
    func successPath() {
        let (steps, machine) = Self.run(
            started(t1) + [
                .responseReceived(t1, Self.head(200)),
                .dataReceived(t1, Self.data("abc")),
                .dataReceived(t1, Self.data("de")),
                .taskCompleted(t1, error: nil),
            ])
        #expect(steps == ["startTask(fresh)", "—", "response 200", "body abc", "body de", "finish(succeeded)"])
        #expect(machine.isFinished)
        #expect(machine.receivedBytes == 5)
        #expect(!machine.idleClockRuns)
    }

    @Test("upload progress before and after the head is delivered where it happens")
    func uploadPath() {
        let (steps, _) = Self.run(
            started(t1) + [
                .bodySent(t1, sent: 10, total: 20),
                .bodySent(t1, sent: 20, total: 20),
                .responseReceived(t1, Self.head(201)),
                .bodySent(t1, sent: 20, total: 20),
                .dataReceived(t1, Self.data("ok")),
                .taskCompleted(t1, error: nil),
            ], restarting: false)
        #expect(steps.dropFirst(2) == ["upload 10/20", "upload 20/20", "response 201", "upload 20/20", "body ok", "finish(succeeded)"])
    }

    @Test("a head without a body completes (HEAD, 204, 304)")
    func headOnly() {
        let (steps, _) = Self.run(started(t1) + [.responseReceived(t1, Self.head(204)), .taskCompleted(t1, error: nil)])
        #expect(steps.dropFirst(2) == ["response 204", "finish(succeeded)"])
    }

    @Test("a 3xx is delivered as the response: the transport never follows redirects")
    func redirectIsDelivered() {
        let (steps, _) = Self.run(
            started(t1) + [
                .responseReceived(t1, Self.head(302, [("Location", "/elsewhere")])),
                .dataReceived(t1, Self.data("moved")),
                .taskCompleted(t1, error: nil),
            ])
        #expect(steps.dropFirst(2) == ["response 302", "body moved", "finish(succeeded)"])
    }

    @Test("a task failing before the head finishes without a response; after it, after the body so far")
    func taskFailures() {
        var (steps, _) = Self.run(started(t1) + [.taskCompleted(t1, error: URLError(.badServerResponse))])
        #expect(steps.last == "finish(failed(URLError \(URLError.badServerResponse.rawValue), before head))")

        (steps, _) = Self.run(
            started(t1) + [
                .responseReceived(t1, Self.head(200)), .dataReceived(t1, Self.data("ab")),
                .taskCompleted(t1, error: URLError(.networkConnectionLost)),
            ])
        #expect(
            steps.dropFirst(2) == [
                "response 200", "body ab",
                "finish(failed(URLError \(URLError.networkConnectionLost.rawValue), after head))",
            ])
    }

    @Test("a task completing without error and without a head is a lost connection")
    func completionWithoutHead() {
        let (steps, _) = Self.run(started(t1) + [.taskCompleted(t1, error: nil)])
        #expect(steps.last == "finish(noResponse)")
    }

    // MARK: - Illegal and late callbacks

    @Test("a response that is not HTTP cancels the task and fails")
    func notHTTP() {
        let (steps, machine) = Self.run(started(t1) + [.responseReceived(t1, nil), .taskCompleted(t1, error: URLError(.cancelled))])
        #expect(steps.dropFirst(2) == ["cancelTask(t1), finish(notHTTP)", "—"])
        #expect(machine.isFinished)
    }

    @Test("body bytes before the head cancel the task and fail")
    func bodyBeforeHead() {
        let (steps, _) = Self.run(started(t1) + [.dataReceived(t1, Self.data("x")), .dataReceived(t1, Self.data("y"))])
        #expect(steps.dropFirst(2) == ["cancelTask(t1), finish(bodyBeforeHead)", "—"])
    }

    @Test("a second head for the same task is ignored: exactly one response")
    func secondHeadIgnored() {
        let (steps, _) = Self.run(
            started(t1) + [
                .responseReceived(t1, Self.head(200)), .responseReceived(t1, Self.head(200)),
                .dataReceived(t1, Self.data("a")),
            ])
        #expect(steps.dropFirst(2) == ["response 200", "—", "body a"])
    }

    @Test("nothing is delivered after the completion", arguments: [false, true])
    func eventsAfterCompletion(restarting: Bool) {
        let t1 = t1
        let late: [Event] = [
            .responseReceived(t1, Self.head(200)), .dataReceived(t1, Self.data("late")),
            .bodySent(t1, sent: 1, total: 1), .taskCompleted(t1, error: nil),
            .taskCompleted(t1, error: URLError(.cancelled)), .cancel, .suspend, .resume,
            .timedOut(.deadline), .timedOut(.idle(.seconds(1))), .start,
        ]
        let (steps, machine) = Self.run(
            started(t1) + [.responseReceived(t1, Self.head(200)), .taskCompleted(t1, error: nil)] + late,
            restarting: restarting)
        #expect(steps[3] == "finish(succeeded)")
        #expect(steps.dropFirst(4).allSatisfy { $0 == "—" })
        #expect(machine.isFinished)
    }

    @Test("a second completion of the task is ignored")
    func completionTwice() {
        let (steps, _) = Self.run(started(t1) + [.taskCompleted(t1, error: URLError(.timedOut)), .taskCompleted(t1, error: nil)])
        #expect(steps.dropFirst(2) == ["finish(failed(URLError \(URLError.timedOut.rawValue), before head))", "—"])
    }

    @Test("callbacks of a task that is not the transfer's are ignored")
    func foreignTask() {
        let (steps, machine) = Self.run(
            started(t1) + [
                .responseReceived(t2, Self.head(200)), .dataReceived(t2, Self.data("x")),
                .bodySent(t2, sent: 1, total: 1), .taskCompleted(t2, error: nil),
            ])
        #expect(steps.dropFirst(2).allSatisfy { $0 == "—" })
        #expect(machine.idleClockRuns)
    }

    @Test("callbacks before the task started are ignored, except the caller's cancel")
    func beforeStart() {
        let t1 = t1
        let (steps, _) = Self.run([.suspend, .resume, .responseReceived(t1, Self.head(200)), .taskCompleted(t1, error: nil)])
        #expect(steps.allSatisfy { $0 == "—" })
    }

    // MARK: - Cancel

    @Test("cancel before start finishes at once; start then does nothing")
    func cancelBeforeStart() {
        let (steps, _) = Self.run([.cancel, .start, .cancel])
        #expect(steps == ["finish(cancelled)", "—", "—"])
    }

    @Test("cancel while the task is being created: the task arriving afterwards is cancelled")
    func cancelWhileStarting() {
        let (steps, _) = Self.run([.start, .cancel, .taskStarted(t1)])
        #expect(steps == ["startTask(fresh)", "finish(cancelled)", "cancelTask(t1)"])
    }

    @Test("cancel before the response cancels the task; its own completion is stale")
    func cancelBeforeResponse() {
        let (steps, _) = Self.run(
            started(t1) + [
                .cancel, .responseReceived(t1, Self.head(200)),
                .taskCompleted(t1, error: URLError(.cancelled)),
            ])
        #expect(steps.dropFirst(2) == ["cancelTask(t1), finish(cancelled)", "—", "—"])
    }

    @Test("cancel during the body: no bytes after it")
    func cancelDuringBody() {
        let (steps, machine) = Self.run(threeBytesIn + [.cancel, .dataReceived(t1, Self.data("de")), .taskCompleted(t1, error: nil)])
        #expect(steps.dropFirst(4) == ["cancelTask(t1), finish(cancelled)", "—", "—"])
        #expect(machine.receivedBytes == 3)
    }

    @Test("cancel twice, and cancel after completion, do nothing")
    func cancelIsIdempotent() {
        var (steps, _) = Self.run(started(t1) + [.cancel, .cancel])
        #expect(steps.dropFirst(2) == ["cancelTask(t1), finish(cancelled)", "—"])
        (steps, _) = Self.run(started(t1) + [.responseReceived(t1, Self.head(200)), .taskCompleted(t1, error: nil), .cancel])
        #expect(steps.last == "—")
    }

    // MARK: - Pause by restarting (GET, HEAD)

    @Test("suspend cancels a GET's task; resume continues with a range from the delivered offset")
    func pauseAndContinue() {
        let (steps, machine) = Self.run(
            threeBytesIn + [
                .suspend,
                .dataReceived(t1, Self.data("d")),  // in flight when the task was cancelled
                .taskCompleted(t1, error: URLError(.cancelled)),
                .resume,
                .taskStarted(t2),
                .responseReceived(t2, Self.head(206, [("Content-Range", "bytes 3-4/5")])),
                .dataReceived(t2, Self.data("de")),
                .taskCompleted(t2, error: nil),
            ])
        #expect(
            steps.dropFirst(2) == [
                "response 200", "body abc",
                "cancelTask(t1)", "—", "—",
                "startTask(from 3, If-Range \"v1\")", "—",
                "—", "body de", "finish(succeeded)",
            ])
        #expect(machine.receivedBytes == 5)
    }

    @Test("a continuation's head is checked, not delivered; while it is awaited the idle clock runs")
    func continuationClock() {
        var machine = Machine(pausesByRestarting: true)
        for event in threeBytesIn + [.suspend] { _ = machine.handle(event) }
        #expect(!machine.idleClockRuns)
        _ = machine.handle(.resume)
        #expect(!machine.idleClockRuns)
        _ = machine.handle(.taskStarted(t2))
        #expect(machine.idleClockRuns)
        #expect(machine.isCurrent(t2))
        #expect(!machine.isCurrent(t1))
    }

    @Test("suspend before the response: resume starts over without a range")
    func pauseBeforeResponse() {
        let (steps, _) = Self.run(
            started(t1) + [
                .suspend, .taskCompleted(t1, error: URLError(.cancelled)), .resume, .taskStarted(t2),
                .responseReceived(t2, Self.head(200)), .dataReceived(t2, Self.data("abc")),
            ])
        #expect(steps.dropFirst(2) == ["cancelTask(t1)", "—", "startTask(fresh)", "—", "response 200", "body abc"])
    }

    @Test("a server ignoring Range without a validator: the bytes already delivered are skipped, across chunks")
    func continuationSkips() {
        let (steps, machine) = Self.run(
            started(t1) + [
                .responseReceived(t1, Self.head(200)), .dataReceived(t1, Self.data("abc")),
                .suspend, .resume, .taskStarted(t2),
                .responseReceived(t2, Self.head(200)),
                .dataReceived(t2, Self.data("ab")),
                .dataReceived(t2, Self.data("cdef")),
                .dataReceived(t2, Self.data("g")),
            ])
        #expect(steps.dropFirst(4) == ["cancelTask(t1)", "startTask(from 3)", "—", "—", "—", "body def", "body g"])
        #expect(machine.receivedBytes == 7)
    }

    @Test("continuations the server cannot honour fail with the reason")
    func continuationRejected() {
        let cases: [(ResponseHead, String)] = [
            (Self.head(200), "resumeRejected(changed)"),
            (Self.head(206, [("Content-Range", "bytes 0-4/5")]), "resumeRejected(range bytes 0-4/5 for 3)"),
            (Self.head(206), "resumeRejected(range none for 3)"),
            (Self.head(416), "resumeRejected(status 416)"),
            (Self.head(500), "resumeRejected(status 500)"),
        ]
        for (head, end) in cases {
            let (steps, machine) = Self.run(
                threeBytesIn + [
                    .suspend, .resume, .taskStarted(t2), .responseReceived(t2, head),
                    .dataReceived(t2, Self.data("de")),
                ])
            #expect(steps.suffix(2) == ["cancelTask(t2), finish(\(end))", "—"], "\(head.statusCode)")
            #expect(machine.isFinished)
        }
    }

    @Test("a continuation's response that is not HTTP fails like a first one")
    func continuationNotHTTP() {
        let (steps, _) = Self.run(threeBytesIn + [.suspend, .resume, .taskStarted(t2), .responseReceived(t2, nil)])
        #expect(steps.last == "cancelTask(t2), finish(notHTTP)")
    }

    @Test("suspend and resume are idempotent")
    func repeatedVerbs() {
        let (steps, _) = Self.run(threeBytesIn + [.suspend, .suspend, .resume, .resume, .taskStarted(t2), .resume, .suspend, .suspend])
        #expect(
            steps.dropFirst(4) == [
                "cancelTask(t1)", "—", "startTask(from 3, If-Range \"v1\")", "—", "—", "—",
                "cancelTask(t2)", "—",
            ])
    }

    @Test("cancel while paused finishes without cancelling again")
    func cancelWhilePaused() {
        let (steps, _) = Self.run(threeBytesIn + [.suspend, .cancel, .taskCompleted(t1, error: URLError(.cancelled)), .resume])
        #expect(steps.dropFirst(4) == ["cancelTask(t1)", "finish(cancelled)", "—", "—"])
    }

    @Test("suspend and resume after cancel do nothing")
    func verbsWhileCancelled() {
        let (steps, _) = Self.run(threeBytesIn + [.cancel, .suspend, .resume])
        #expect(steps.dropFirst(4) == ["cancelTask(t1), finish(cancelled)", "—", "—"])
    }

    @Test("a task that completed before the pause's cancel took effect: resume completes instead of asking for more")
    func pauseRacesCompletion() {
        let (steps, machine) = Self.run(
            threeBytesIn + [
                .dataReceived(t1, Self.data("de")), .suspend,
                .taskCompleted(t1, error: nil), .resume, .resume,
            ])
        #expect(steps.dropFirst(5) == ["cancelTask(t1)", "—", "finish(succeeded)", "—"])
        #expect(machine.receivedBytes == 5)
    }

    @Test("a task that completed after the pause dropped some of it: resume continues from what was delivered")
    func pauseRacesCompletionWithDroppedBytes() {
        let (steps, _) = Self.run(threeBytesIn + [.suspend, .dataReceived(t1, Self.data("de")), .taskCompleted(t1, error: nil), .resume])
        #expect(steps.dropFirst(4) == ["cancelTask(t1)", "—", "—", "startTask(from 3, If-Range \"v1\")"])
    }

    @Test("a task paused before its head that then completed: resume starts over")
    func pauseRacesCompletionBeforeHead() {
        let (steps, _) = Self.run(started(t1) + [.suspend, .responseReceived(t1, Self.head(200)), .taskCompleted(t1, error: nil), .resume])
        #expect(steps.dropFirst(2) == ["cancelTask(t1)", "—", "—", "startTask(fresh)"])
    }

    // MARK: - Pause by holding (other methods)

    @Test("suspend holds a POST's events; resume delivers them in order and keeps running")
    func holdAndRelease() {
        let (steps, machine) = Self.run(
            started(t1) + [
                .bodySent(t1, sent: 5, total: 10),
                .suspend,
                .bodySent(t1, sent: 10, total: 10),
                .responseReceived(t1, Self.head(200)),
                .dataReceived(t1, Self.data("ab")),
                .resume,
                .dataReceived(t1, Self.data("c")),
                .taskCompleted(t1, error: nil),
            ], restarting: false)
        #expect(
            steps.dropFirst(2) == [
                "upload 5/10", "—", "—", "—", "—", "upload 10/10, response 200, body ab", "body c",
                "finish(succeeded)",
            ])
        #expect(machine.receivedBytes == 3)
    }

    @Test("a held task that completes: resume delivers what was held, then finishes with its end")
    func heldCompletion() {
        var (steps, machine) = Self.run(
            started(t1) + [
                .suspend, .responseReceived(t1, Self.head(200)), .dataReceived(t1, Self.data("ab")),
                .taskCompleted(t1, error: nil), .resume, .resume,
            ], restarting: false)
        #expect(steps.dropFirst(2) == ["—", "—", "—", "—", "response 200, body ab, finish(succeeded)", "—"])
        #expect(machine.isFinished)

        (steps, machine) = Self.run(
            started(t1) + [
                .suspend, .responseReceived(t1, Self.head(200)),
                .taskCompleted(t1, error: URLError(.networkConnectionLost)), .resume,
            ],
            restarting: false)
        #expect(steps.last == "response 200, finish(failed(URLError \(URLError.networkConnectionLost.rawValue), after head))")
    }

    @Test("held: idle clock stops, the task stays current")
    func holdingClock() {
        let (_, machine) = Self.run(started(t1) + [.suspend], restarting: false)
        #expect(!machine.idleClockRuns)
        #expect(machine.isCurrent(t1))
    }

    @Test("cancel while holding drops the held events and cancels the task")
    func cancelWhileHolding() {
        let (steps, _) = Self.run(
            started(t1) + [
                .suspend, .responseReceived(t1, Self.head(200)), .cancel, .resume,
                .taskCompleted(t1, error: URLError(.cancelled)),
            ], restarting: false)
        #expect(steps.dropFirst(2) == ["—", "—", "cancelTask(t1), finish(cancelled)", "—", "—"])
    }

    @Test("cancel after a held completion: the completion was not delivered, so the end is cancelled")
    func cancelAfterHeldCompletion() {
        let (steps, _) = Self.run(
            started(t1) + [
                .suspend, .responseReceived(t1, Self.head(200)), .taskCompleted(t1, error: nil),
                .cancel, .resume,
            ], restarting: false)
        #expect(steps.dropFirst(2) == ["—", "—", "—", "finish(cancelled)", "—"])
    }

    @Test("a failure found while holding ends the transfer at once")
    func failureWhileHolding() {
        let (steps, _) = Self.run(started(t1) + [.suspend, .responseReceived(t1, nil), .resume], restarting: false)
        #expect(steps.dropFirst(2) == ["—", "cancelTask(t1), finish(notHTTP)", "—"])
    }

    // MARK: - Timeouts

    @Test("a timeout ends the transfer in every phase, cancelling a task that still runs")
    func timeouts() {
        let t1 = t1, t2 = t2
        let idle = Event.timedOut(.idle(.seconds(2)))
        let cases: [([Event], Bool, String)] = [
            ([.start, .taskStarted(t1), idle], true, "cancelTask(t1), finish(timedOut(idle 2.0 seconds))"),
            ([.start, .taskStarted(t1), .timedOut(.deadline)], true, "cancelTask(t1), finish(timedOut(deadline))"),
            ([.start, .taskStarted(t1), .suspend, .timedOut(.deadline)], true, "finish(timedOut(deadline))"),
            ([.start, .taskStarted(t1), .suspend, .timedOut(.deadline)], false, "cancelTask(t1), finish(timedOut(deadline))"),
            (
                [.start, .taskStarted(t1), .suspend, .resume, .taskStarted(t2), idle], true,
                "cancelTask(t2), finish(timedOut(idle 2.0 seconds))"
            ),
            ([.start, .timedOut(.deadline)], true, "finish(timedOut(deadline))"),
        ]
        for (events, restarting, last) in cases {
            let (steps, machine) = Self.run(events, restarting: restarting)
            #expect(steps.last == last)
            #expect(machine.isFinished)
        }
    }

    // MARK: - Errors of the completed event

    @Test("each end maps to the completed event's error")
    func endErrors() {
        typealias End = Machine.End
        let url = Self.url
        let cases: [(End, CourierError.Kind?, Int?)] = [
            (.succeeded, nil, nil),
            (.taskFailed(URLError(.badServerResponse), afterHead: false), .connectionLost, nil),
            (.taskFailed(URLError(.badServerResponse), afterHead: true), .invalidResponse, nil),
            (.taskFailed(URLError(.timedOut), afterHead: false), .timedOut, nil),
            (.taskFailed(URLError(.cancelled), afterHead: true), .cancelled, nil),
            (.taskFailed(CocoaError(.fileReadNoSuchFile), afterHead: false), .fileSystem, nil),
            (.noResponse, .connectionLost, nil),
            (.cancelled, .cancelled, nil),
            (.timedOut(.deadline), .timedOut, nil),
            (.timedOut(.idle(.milliseconds(1500))), .timedOut, nil),
            (.notHTTP, .invalidResponse, nil),
            (.bodyBeforeHead, .invalidResponse, nil),
            (.resumeRejected(.wrongRange(contentRange: "bytes 0-1/2", offset: 1)), .resumeFailed, 206),
            (.resumeRejected(.resourceChanged), .resumeFailed, 200),
            (.resumeRejected(.status(416)), .resumeFailed, 416),
            (.rejected(CourierError(.responseTooLarge, "ratio", responseCode: 200)), .responseTooLarge, 200),
        ]
        for (end, kind, code) in cases {
            let error = end.error(url: url)
            #expect(error?.kind == kind, "\(Self.describe(end))")
            #expect(error?.responseCode == code, "\(Self.describe(end))")
            if error != nil { #expect(error?.url == url, "\(Self.describe(end))") }
        }
        #expect(
            Machine.End.timedOut(.idle(.milliseconds(1500))).error(url: url)?.message
                == "No data was sent or received for 1.5 s (request timeout).")
        #expect(
            Machine.End.resumeRejected(.wrongRange(contentRange: nil, offset: 7)).error(url: url)?.message
                == "After a pause the server sent a range (none) that does not start at byte 7.")
    }
}
