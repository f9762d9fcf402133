import Dispatch
import CourierLocking

/// A one-shot rendezvous between one waiter (async or blocking) and whoever completes it first:
/// a delivered value, a timeout, a cancellation or a shutdown.
final class WaitSlot<Value: Sendable>: Sendable {
    private enum State {
        case pending
        case suspended(CheckedContinuation<Value, any Error>)
        case completed(Result<Value, any Error>)
        case delivered
    }

    private let state = Locked<State>(.pending)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Whether the slot has been completed (its value may or may not have been collected yet).
    var isCompleted: Bool {
        state.withLock { state in
            if case .pending = state { return false }
            if case .suspended = state { return false }
            return true
        }
    }

    /// Completes the slot unless something else already did. Returns the wake-up to run once the
    /// caller has released its own locks, or nil when the slot was already completed (so `result`
    /// was not taken).
    func complete(_ result: Result<Value, any Error>) -> (@Sendable () -> Void)? {
        let outcome: (accepted: Bool, continuation: CheckedContinuation<Value, any Error>?) = state.withLock { state in
            switch state {
            case .pending:
                state = .completed(result)
                return (true, nil)
            case .suspended(let continuation):
                state = .delivered
                return (true, continuation)
            case .completed, .delivered:
                return (false, nil)
            }
        }
        guard outcome.accepted else { return nil }
        let continuation = outcome.continuation
        let semaphore = self.semaphore
        return {
            continuation?.resume(with: result)
            semaphore.signal()
        }
    }

    /// Suspends until the slot is completed, without a timeout of its own.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Value, any Error>? = state.withLock { state in
                switch state {
                case .pending:
                    state = .suspended(continuation)
                    return nil
                case .completed(let result):
                    state = .delivered
                    return result
                case .suspended, .delivered:
                    return .failure(TestServerError.internalInconsistency("a wait slot was awaited twice"))
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Blocks the calling thread until the slot is completed or `timeout` passes.
    func blockingValue(timeout: Duration) -> Result<Value, any Error> {
        if semaphore.wait(timeout: DispatchTime.now() + timeout.dispatchInterval) == .timedOut {
            complete(.failure(TestServerError.timeout))?()
        }
        return state.withLock { state in
            if case .completed(let result) = state {
                state = .delivered
                return result
            }
            return .failure(TestServerError.internalInconsistency("a wait slot was collected twice"))
        }
    }

    /// Waits asynchronously for the slot, failing with `TestServerError.timeout` after `timeout`
    /// and with `CancellationError` if the task is cancelled.
    func value(timeout: Duration) async throws -> Value {
        let timer = Task { [self] in
            do {
                try await Task.sleep(for: timeout)
            } catch {
                return
            }
            complete(.failure(TestServerError.timeout))?()
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await value()
        } onCancel: {
            complete(.failure(CancellationError()))?()
        }
    }
}

extension Duration {
    /// This duration as a Dispatch interval, clamped to what Dispatch can represent.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        if seconds < 0 { return .nanoseconds(0) }
        if seconds > 1_000_000_000 { return .seconds(1_000_000_000) }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// This duration in whole milliseconds, rounded up, clamped to `Int32`.
    var millisecondsRoundedUp: Int32 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds > 1_000_000 { return Int32.max }
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: millis)
    }
}
