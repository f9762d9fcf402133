import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestEngine {
    /// Asks the response-head handlers about `head`, holding the exchange's further events until
    /// they decide; the decision comes back through the executor like any other event.
    func askResponseHeadHandlers(_ head: ResponseHead, _ response: LazyHTTPResponse, in exchange: Exchange) {
        guard let access = owner?.engineAccess else {
            beginBody(head, response, in: exchange)
            return
        }
        exchange.heldEvents = []
        let handlers = responseHeadHandlers
        let number = exchange.number
        let httpResponse = response.httpResponse
        Task {
            var disposition = ResponseDisposition.allow
            for handler in handlers {
                disposition = await handler(httpResponse)
                if disposition == .cancel { break }
            }
            let decided = disposition
            access.perform { $0.responseHeadDecided(decided, head: head, response: response, exchange: number) }
        }
    }

    private func responseHeadDecided(_ disposition: ResponseDisposition, head: ResponseHead, response: LazyHTTPResponse, exchange number: Int) {
        // A cancel (or a timeout) may have ended the exchange while the handlers decided.
        guard case .transferring(_, let exchange)? = lifecycle.currentPhase, exchange.number == number,
            let held = exchange.heldEvents
        else { return }
        exchange.heldEvents = nil
        if disposition == .cancel {
            record.response = response
            cancel()
            return
        }
        beginBody(head, response, in: exchange)
        for event in held { handle(event, exchange: number) }
    }
}
