import Foundation

/// The life of one exchange the HTTP cache sends to the network: a plain fetch, or the
/// revalidation of a stored response. It decides, event by event, what reaches the request, what
/// is kept and what is served from the store instead; the sink around it carries the actions out.
///
/// Pure: times come in with the events and nothing here touches the store or a transfer, so the
/// transitions are tested as event → action tables.
struct HTTPCacheExchangeMachine {
    /// Why the exchange went to the network.
    enum Purpose {
        /// Nothing usable was stored.
        case fetch
        /// A stored response must be validated but has no validators, so it is fetched afresh
        /// (no condition sent); it may still answer for a `5xx` or a failure (`stale-if-error`).
        case refetch(CacheEntryHead)
        /// A stored response is being revalidated (`If-None-Match` / `If-Modified-Since` sent).
        case revalidate(CacheEntryHead)
        /// A stored response is being refreshed in the background while its stale copy was served
        /// (stale-while-revalidate): nobody waits for this exchange's answer.
        case backgroundRevalidate(CacheEntryHead?)
    }

    enum State {
        /// Sent; no head yet.
        case awaitingHead(Purpose)
        /// The network's answer goes to the request, and a copy into the store.
        case storing
        /// The network's answer goes to the request; nothing is kept.
        case passing
        /// The network's answer is swallowed (a `304`'s empty body, a `5xx` served stale); the
        /// stored response is served once the exchange completes.
        case awaitingCompletionToServe(CacheEntryHead, ResponseSource)
        /// A `304` named another representation than the stored one (RFC 9111 §4.3.4): the stored
        /// response cannot be used, and the request is sent again without validators once this
        /// exchange is over.
        case awaitingCompletionToRefetch
        /// The stored response is being served, or the exchange ended: nothing more is forwarded.
        case ended
    }

    /// What the sink must do.
    enum Action: Equatable {
        /// Pass the event on to the request unchanged.
        case forward(Forwarded)
        /// Open a writer for a response with this head.
        case startStoring(CacheEntryHead)
        /// Open a writer for the new partial response combined with the stored one (RFC 9111
        /// §3.4): the stored bytes `before` it, its own bytes, then the stored bytes `after` it.
        case startCombining(PartialCombination)
        /// Publish the writer's entry.
        case commitStored
        /// Drop the writer's partial entry.
        case discardStored
        /// Replace the stored head (after a `304`), keeping the body.
        case updateStoredHead(CacheEntryHead)
        /// Serve the stored response with this head, marked with `source`, once the network
        /// exchange (whose metrics ride along) is done.
        case serveStored(CacheEntryHead, ResponseSource, metrics: TransferMetrics?)
        /// Remove the stored response (it was revalidated and came back different but not storable).
        case removeStored
        /// Send the request again, without validators, as a plain fetch.
        case refetch
        /// Tell the request's monitors.
        case notify(HTTPCacheEvent)
    }

    /// The events a request sees, as the machine forwards them (body bytes: see ``BodyRoute``).
    enum Forwarded: Equatable {
        case head(statusCode: Int)
        case completed(failed: Bool, source: ResponseSource)
    }

    /// Where a piece of the body goes: to the request, into the store's writer, both or neither.
    /// A plain pair rather than actions: it is decided once per piece, on the hot path.
    struct BodyRoute: Equatable {
        var forwards: Bool
        var stores: Bool
    }

    let rules: HTTPCacheRules
    /// The request as sent (to remember what `Vary` names and whether it carried credentials).
    let method: HTTPMethod
    let requestHeaders: HTTPHeaders
    /// When the request was sent (RFC 9111 §4.2.3 request_time).
    let requestTime: Date
    /// Whether a request waits for this exchange's answer (not for a background revalidation,
    /// whose answer only goes to the store).
    let forwardsToRequest: Bool
    /// A stored partial response (its head, and how many bytes it holds) that a new `206` with the
    /// same strong validator may extend, when the request asked for bytes it does not hold.
    let storedPart: (head: CacheEntryHead, length: Int64)?
    private(set) var state: State

    init(
        rules: HTTPCacheRules, method: HTTPMethod, requestHeaders: HTTPHeaders, requestTime: Date, purpose: Purpose,
        storedPart: (head: CacheEntryHead, length: Int64)? = nil
    ) {
        self.rules = rules
        self.method = method
        self.requestHeaders = requestHeaders
        self.requestTime = requestTime
        self.storedPart = storedPart
        if case .backgroundRevalidate = purpose { forwardsToRequest = false } else { forwardsToRequest = true }
        state = .awaitingHead(purpose)
    }

    /// A response head arrived at `now`; `bodyIsCoded` when its body comes still in the content
    /// coding `Content-Encoding` names (the transport did not decode it), so the stored copy keeps
    /// the field.
    mutating func receiveHead(statusCode: Int, headers: HTTPHeaders, bodyIsCoded: Bool = false, now: Date) -> [Action] {
        guard case .awaitingHead(let purpose) = state else { return [] }
        // The stored response the request's validators came from, and the one that may stand in
        // for an error (stale-if-error).
        let stored: CacheEntryHead?
        let standIn: CacheEntryHead?
        switch purpose {
        case .fetch: (stored, standIn) = (nil, nil)
        case .refetch(let head): (stored, standIn) = (nil, head)
        case .revalidate(let head): (stored, standIn) = (head, head)
        case .backgroundRevalidate(let head): (stored, standIn) = (head, nil)
        }
        let waiting = forwardsToRequest
        var actions: [Action] = []
        if statusCode == 304, let stored, !rules.mayFreshen(stored, with: headers) {
            state = waiting ? .awaitingCompletionToRefetch : .ended
            return [.removeStored, .notify(.miss(reason: "the 304 names another representation than the stored one"))]
        }
        if statusCode == 304, let stored {
            let freshened = rules.freshened(stored, with: headers, requestTime: requestTime, responseTime: now)
            actions += [.updateStoredHead(freshened), .notify(.revalidated(notModified: true))]
            guard waiting else {
                state = .ended
                return actions
            }
            state = .awaitingCompletionToServe(freshened, .revalidated)
            return actions
        }
        if (500..<600).contains(statusCode), waiting, let standIn, rules.mayServeStaleOnError(standIn, now: now, requestHeaders: requestHeaders) {
            state = .awaitingCompletionToServe(standIn, .staleCache(.staleIfError))
            return [.notify(.hit(.staleCache(.staleIfError)))]
        }
        if stored != nil { actions.append(.notify(.revalidated(notModified: false))) }
        if waiting { actions.append(.forward(.head(statusCode: statusCode))) }
        if method == .get,
            let refusal = rules.refusalToStore(
                method: method, requestHeaders: requestHeaders,
                statusCode: statusCode, responseHeaders: headers)
        {
            actions.append(.notify(.notStored(reason: refusal)))
            // A stored response the server no longer lets anyone keep must not be served again.
            if stored != nil || standIn != nil { actions.append(.removeStored) }
            state = waiting ? .passing : .ended
        } else if method == .get {
            let head = CacheEntryHead(
                statusCode: statusCode, headers: Self.storedHeaders(headers, keepingContentEncoding: bodyIsCoded),
                requestTime: requestTime, responseTime: now,
                varyingRequestHeaders: rules.varyingRequestHeaders(
                    requestHeaders: requestHeaders,
                    responseHeaders: headers),
                requestHadAuthorization: requestHeaders.contains("Authorization"))
            if statusCode == 206, let part = storedPart, let combination = rules.combination(of: part.head, storedLength: part.length, with: head) {
                actions.append(.startCombining(combination))
            } else {
                actions.append(.startStoring(head))
            }
            state = .storing
        } else {
            state = waiting ? .passing : .ended
        }
        return actions
    }

    /// Body bytes arrived.
    func receiveBody() -> BodyRoute {
        switch state {
        case .storing: BodyRoute(forwards: forwardsToRequest, stores: true)
        case .passing: BodyRoute(forwards: true, stores: false)
        case .awaitingHead, .awaitingCompletionToServe, .awaitingCompletionToRefetch, .ended: BodyRoute(forwards: false, stores: false)
        }
    }

    /// The exchange ended, failed with `error` unless it succeeded.
    mutating func complete(failed: Bool, metrics: TransferMetrics?, now: Date) -> [Action] {
        defer { state = .ended }
        switch state {
        case .awaitingHead(let purpose):
            // Failed before a head: a stored response may stand in for the error (stale-if-error).
            switch purpose {
            case .revalidate(let stored), .refetch(let stored):
                if failed, rules.mayServeStaleOnError(stored, now: now, requestHeaders: requestHeaders) {
                    return [.notify(.hit(.staleCache(.staleIfError))), .serveStored(stored, .staleCache(.staleIfError), metrics: metrics)]
                }
            case .fetch, .backgroundRevalidate:
                break
            }
            if case .backgroundRevalidate = purpose { return [] }
            return [.forward(.completed(failed: failed, source: .network))]
        case .storing:
            let ending: [Action] = failed ? [.discardStored] : [.commitStored]
            return forwardsToRequest ? ending + [.forward(.completed(failed: failed, source: .network))] : ending
        case .passing:
            return [.forward(.completed(failed: failed, source: .network))]
        case .awaitingCompletionToRefetch:
            return [.refetch]
        case .awaitingCompletionToServe(let head, let source):
            // Even when the exchange failed after its head (a 304's connection dropping, say), the
            // stored body is intact and the head already says what the server said.
            return [.serveStored(head, source, metrics: metrics)]
        case .ended:
            return []
        }
    }

    /// Response headers as stored: those describing the wire form and those that must not be
    /// replayed are dropped; `Content-Encoding` too, unless `keepingContentEncoding` (the body is
    /// stored as it arrived, still coded: replayed without the field, it would pass for plain).
    static func storedHeaders(_ headers: HTTPHeaders, keepingContentEncoding: Bool = false) -> HTTPHeaders {
        var kept = headers
        for name in CacheStore.droppedHeaders where !(keepingContentEncoding && name == "Content-Encoding") { kept.remove(name: name) }
        return kept
    }
}
