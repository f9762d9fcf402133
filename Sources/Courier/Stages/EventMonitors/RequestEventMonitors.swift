import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// Adds event monitors for this request only, told about each of its events after the
    /// session's monitors (in the order added).
    ///
    /// Added in the chain that creates the request, they see its whole life, `requestDidCreate`
    /// included; added later, they see the events from then on.
    ///
    /// ```swift
    /// let timing = LoggingMonitor(verbose: true)
    /// let text = try await session.request("slow/report")
    ///     .eventMonitors([timing])
    ///     .serializingString().value
    /// ```
    @discardableResult
    public nonisolated func eventMonitors(_ monitors: [any EventMonitor]) -> Self {
        engineAccess.perform { [self] engine in
            engine.requestMonitors += monitors
            // Creation is announced before any chained call can run: replay it for monitors that
            // arrive while nothing else happened yet.
            if engine.lifecycle.publicState == .initialized {
                for monitor in monitors { monitor.requestDidCreate(self) }
            }
        }
        return self
    }
}
