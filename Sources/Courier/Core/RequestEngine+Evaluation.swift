import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestEngine {
    /// Validates the attempt's outcome (`failure` when it already failed), then finishes or asks the retriers.
    func evaluate(attempt: Int, failure: CourierError?) {
        var error = failure
        if error == nil, let response = record.response {
            if !sink.kind.validatesAtHead { error = firstValidationFailure(response, body: sink.body) }
        } else if error == nil {
            error = CourierError(.invalidResponse, "The exchange ended without a response.", url: record.request?.url)
        }
        let askRetriers =
            error?.isCancelled == false && (session.interceptor != nil || !interceptors.isEmpty) && !sink.hasHandedOutBytes && owner != nil
        apply(machine.evaluated(attempt: attempt, error, askRetriers: askRetriers))
    }

    /// Asks the retriers about `error` off the executor; the verdict comes back to the machine with `token`.
    func askRetriers(about error: CourierError, _ token: Machine.ExcursionToken) {
        let retriers: [any RequestRetrier] = (session.interceptor.map { [$0] } ?? []) + interceptors
        guard let owner else {
            apply(machine.retryDecided(token, .conclude(error)))
            return
        }
        let session = session
        let access = owner.engineAccess
        Task {
            let decision = await Interceptor(retriers: retriers).retry(owner, for: session, dueTo: error)
            access.perform { engine in
                let verdict: Machine.RetryVerdict
                if let delay = decision.delay {
                    verdict = .retry(after: delay)
                } else if case .doNotRetryWithError(let replacement) = decision {
                    verdict = .conclude(CourierError(wrapping: replacement, url: engine.record.request?.url))
                } else {
                    verdict = .conclude(error)
                }
                engine.apply(engine.machine.retryDecided(token, verdict))
            }
        }
    }

    /// Runs the validators in order; the first failure wins and is reported to monitors.
    func firstValidationFailure(_ response: LazyHTTPResponse, body: RequestCompletion.Body) -> CourierError? {
        let input = ValidationInput(request: record.request, response: response, body: body)
        for validator in validators {
            if let failure = validator.validate(input) {
                notifyMonitors { $0.request($1, didFailValidationWith: failure) }
                return failure
            }
        }
        return nil
    }

    func scheduleRetry(attempt: Int, after delay: Duration) {
        guard let access = owner?.engineAccess else { return }
        guard delay > .zero else {
            access.perform { $0.apply($0.machine.delayElapsed(attempt: attempt)) }
            return
        }
        let clock = session.configuration.retryClock
        retryDelay = Task {
            try? await clock.sleep(for: delay)
            access.perform { engine in
                engine.retryDelay = nil
                engine.apply(engine.machine.delayElapsed(attempt: attempt))
            }
        }
    }

    /// Makes the body final and completes the request with `error`, or with the failure to make it final.
    func conclude(attempt: Int, error: CourierError?) {
        if let error {
            sink.discard()
            return apply(machine.finish(attempt: attempt, completion(body: sink.body, error: error), awaitingDelivery: sink.kind.consumerSetsPace))
        }
        do {
            let body = try sink.finalize(response: record.response)
            apply(machine.finish(attempt: attempt, completion(body: body, error: nil), awaitingDelivery: sink.kind.consumerSetsPace))
        } catch {
            let failure = CourierError(wrapping: error, url: record.request?.url)
            // Discarded first: a body that could not be made final (a download whose move failed)
            // must not be handed out as a file that no longer exists.
            sink.discard()
            apply(machine.finish(attempt: attempt, completion(body: sink.body, error: failure), awaitingDelivery: sink.kind.consumerSetsPace))
        }
    }

    private func completion(body: RequestCompletion.Body, error: CourierError?) -> RequestCompletion {
        RequestCompletion(request: record.request, response: record.response, body: body, metrics: record.metrics, error: error)
    }
}
