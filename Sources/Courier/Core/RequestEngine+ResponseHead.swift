import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestEngine {
    /// Asks the response-head handlers about `exchange`'s final head off the executor; the
    /// decision comes back to the machine with `token`, and the exchange's events wait meanwhile.
    func askResponseHeadHandlers(about exchange: Exchange, _ token: Machine.ExcursionToken) {
        guard let access = owner?.engineAccess, let response = exchange.response else {
            apply(machine.responseHeadDecided(token, proceed: true))
            return
        }
        let handlers = responseHeadHandlers
        let httpResponse = response.httpResponse
        Task {
            var disposition = ResponseDisposition.allow
            for handler in handlers {
                disposition = await handler(httpResponse)
                if disposition == .cancel { break }
            }
            let proceed = disposition != .cancel
            access.perform { $0.apply($0.machine.responseHeadDecided(token, proceed: proceed)) }
        }
    }
}
