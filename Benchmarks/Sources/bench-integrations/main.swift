// What the integrations cost per request (BENCHMARKS.md, "Integrations"): 5,000 GETs of a
// 100-byte JSON, one at a time, against an in-process CourierTestServer, with no monitor, with
// CourierMetrics (swift-metrics' no-op backend: Courier's side of the cost), with CourierTracing
// (swift-distributed-tracing's in-memory tracer, which records every span), with CourierLogging at
// `info` (nothing logged: the cost of the level checks), and with all three. Rounds interleave the
// configurations so that a change in the machine's load falls on all of them alike.
//
// Usage: bench-integrations [--requests N] [--rounds N] [--transport curl|urlsession]
import Courier
import CourierLogging
import CourierMetrics
import CourierTestServer
import CourierTracing
import Foundation
import InMemoryTracing
import Logging
import Metrics

var requests = 5_000
var rounds = 3
var transport = "curl"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--requests": requests = arguments.next().flatMap(Int.init) ?? requests
    case "--rounds": rounds = arguments.next().flatMap(Int.init) ?? rounds
    case "--transport": transport = arguments.next() ?? transport
    default: break
    }
}

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
}

let server = try TestServer()
let body = String(repeating: "x", count: 84)
server.route("/item") { _ in .json(#"{"id":42,"name":"\#(body)"}"#) }

let quiet: Logger = {
    var logger = Logger(label: "bench")
    logger.logLevel = .info
    return logger
}()
let configurations: [(String, @Sendable () -> [any EventMonitor])] = [
    ("off", { [] }),
    ("metrics", { [MetricsMonitor(factory: NOOPMetricsHandler.instance)] }),
    ("tracing", { [TracingMonitor(tracer: InMemoryTracer(recordInjections: false, recordExtractions: false))] }),
    ("logging at info", { [LoggerMonitor(logger: quiet)] }),
    (
        "all three",
        {
            [
                MetricsMonitor(factory: NOOPMetricsHandler.instance),
                TracingMonitor(tracer: InMemoryTracer(recordInjections: false, recordExtractions: false)),
                LoggerMonitor(logger: quiet),
            ]
        }
    ),
]

print("bench-integrations: \(requests) GETs one at a time, \(rounds) rounds, transport \(transport); load \(loadAverage())")
var seconds: [String: [Double]] = [:]
for round in 1...rounds {
    for (name, monitors) in configurations {
        var configuration = SessionConfiguration()
        configuration.transport = transport == "curl" ? .curl : .urlSession(.ephemeral)
        let session = Session(configuration: configuration, baseURL: server.baseURL, eventMonitors: monitors())
        _ = try await session.request("item").serializingData().value  // connection up
        let start = ContinuousClock.now
        for _ in 0..<requests { _ = try await session.request("item").validate().serializingData().value }
        let elapsed = start.duration(to: .now)
        let value = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        seconds[name, default: []].append(value)
        print(String(format: "round %d  %@ %.3f s  %.1f µs/request", round, name as NSString, value, value / Double(requests) * 1e6))
    }
}
let baseline = seconds["off"]!.sorted()[rounds / 2]
print("median per configuration, ratio to off; load \(loadAverage())")
for (name, _) in configurations {
    let median = seconds[name]!.sorted()[rounds / 2]
    print(String(format: "  %@ %.1f µs/request  ×%.2f", name as NSString, median / Double(requests) * 1e6, median / baseline))
}
_ = server.shutdown()
