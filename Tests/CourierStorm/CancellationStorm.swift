import CourierLocking
import Dispatch

import struct Foundation.URL

import Courier

/// Ten thousand requests, each cancelled at a different moment of its life (before it starts,
/// right after, in the middle of its response, at its completion) or not at all, 64 in flight.
///
/// One copy, run two ways: by `CancellationStormTests` in every test run (ThreadSanitizer
/// included), and by the `cancellation-storm` program built in release, where the optimiser
/// reorders what a debug build keeps in order.
package enum CancellationStorm {
    /// How the requests of one storm ended.
    package struct Outcome: Sendable, CustomStringConvertible {
        /// How many requests ran.
        package var total = 0
        /// Requests that delivered the value their path asked for.
        package var values = 0
        /// Requests that ended with a cancellation error.
        package var cancelled = 0
        /// Any other end (a wrong value, another error), described; at most ten are kept.
        package var unexpected: [String] = []
        /// How many ended another way (all of them, beyond the ten described).
        package var unexpectedCount = 0

        /// Every request ended with its value or with a cancellation, and at least one in five
        /// (those never cancelled) with its value.
        package var holds: Bool { values + cancelled == total && unexpectedCount == 0 && values >= total / 5 }

        package var description: String {
            "\(total) requests: \(values) values, \(cancelled) cancelled, \(unexpectedCount) other"
                + (unexpected.isEmpty ? "" : " (first: \(unexpected.joined(separator: "; ")))")
        }
    }

    /// The answer the server must give to `path` (what a request checks its value against).
    package static func answer(toPath path: String) -> String { "value of \(path)" }

    /// Runs the storm through `session`, whose server answers each path with
    /// ``answer(toPath:)``; progress callbacks run on `callbackQueue`.
    package static func run(session: Session, total: Int = 10_000, inFlight: Int = 64, callbackQueue: DispatchQueue) async -> Outcome {
        let outcome = Locked(Outcome())
        await forEachConcurrently(total, atMost: inFlight) { index in
            let request = session.request("r\(index)")
            let task = request.serializingString()
            switch index % 5 {
            case 0:
                request.cancel()  // before it starts
            case 1:
                task.resume()
                request.cancel()  // right after it starts
            case 2:
                request.onDownloadProgress(queue: callbackQueue) { _ in request.cancel() }  // mid-response
            case 3:
                Task {
                    _ = await task.result
                    request.cancel()
                }  // right at completion
            default:
                break  // no cancel
            }
            let result = await task.result
            outcome.withLock { outcome in
                outcome.total += 1
                switch result {
                case .success(let value) where value == answer(toPath: "/r\(index)"): outcome.values += 1
                case .failure(let error) where error.isCancelled: outcome.cancelled += 1
                default:
                    outcome.unexpectedCount += 1
                    if outcome.unexpected.count < 10 { outcome.unexpected.append("r\(index): \(result)") }
                }
            }
        }
        return outcome.withLock { $0 }
    }
}
