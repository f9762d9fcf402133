import Foundation
import CourierLocking

/// Warnings Courier prints in debug builds about likely mistakes in the caller's code (a base
/// path dropped by a request path starting with `/`, for instance), once per distinct case.
///
/// Package-only: tests replace ``sink`` to capture the lines instead of reading standard error.
package enum DebugWarnings {
    /// Where warnings go; standard error unless replaced.
    package static let sink = Locked<@Sendable (String) -> Void>({ line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    })

    /// The keys already warned about.
    private static let warned = Locked(Set<String>())

    /// Sends `line` to the sink, unless a warning with the same `key` was already sent.
    package static func emit(_ line: String, once key: String) {
        guard warned.withLock({ $0.insert(key).inserted }) else { return }
        let sink = sink.withLock { $0 }
        sink(line)
    }
}
