import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// Answers one request's `401 Unauthorized` challenges with a credential: Basic or Digest
/// (RFC 7616), in Courier itself, so it works the same on every transport.
///
/// One responder per request. It is three things at once:
/// - a validator that makes a 401 it can answer a failure (so it is retried even without `validate()`);
/// - a retrier that takes the challenge and retries;
/// - an adapter that puts the answer on the next attempt (a Digest answer per attempt, with its
///   method, URI and nonce count).
///
/// It answers only challenges from the origin the request was first sent to (never one a redirect
/// led to), and at most once per challenge: a second 401 after an answer is delivered as it is,
/// unless the server says the Digest nonce was merely stale.
final class ChallengeResponder: RequestInterceptor {
    private let credential: HTTPCredential

    private struct State {
        /// The origin of the request's first attempt, learned when it is adapted.
        var origin: String?
        /// The challenge the next attempts answer.
        var answer: Answer?
        /// Challenges answered so far.
        var answered = 0
    }

    private enum Answer {
        case basic
        case digest(DigestChallenge, nonceCount: Int)
    }

    /// At most this many answers per request (the first, and stale-nonce renewals).
    private static let maximumAnswers = 3

    // The lock guards the origin, the current answer and the counts, which the request's adapter,
    // validator and retrier read and write from different tasks.
    private let state = Locked(State())

    init(credential: HTTPCredential) {
        self.credential = credential
    }

    /// The validator: a 401 this responder will answer is a failure.
    var validator: Validator {
        Validator { [self] input in
            guard let sent = input.request,
                chosenChallenge(
                    status: input.statusCode, sent: sent, field: input.header("WWW-Authenticate"),
                    commit: false) != nil
            else { return nil }
            return CourierError(
                validationFailure: .unacceptableStatusCode(input.statusCode),
                "The server asks for authentication (401); answering its challenge.",
                responseCode: input.statusCode, url: sent.url)
        }
    }

    func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        guard error.responseCode == 401 else { return .doNotRetry }
        let context = await request.retryContext()
        guard let response = context.response(for: error), let sent = context.lastRequest,
            chosenChallenge(
                status: response.statusCode, sent: sent, field: response.value(forHTTPHeaderField: "WWW-Authenticate"),
                commit: true) != nil
        else { return .doNotRetry }
        return .retry
    }

    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        let origin = request.url?.origin
        let answer: Answer? = state.withLock { state in
            if state.origin == nil { state.origin = origin }
            guard state.origin == origin, let answer = state.answer else { return nil }
            if case .digest(let challenge, let count) = answer {
                state.answer = .digest(challenge, nonceCount: count + 1)
                return .digest(challenge, nonceCount: count + 1)
            }
            return answer
        }
        guard let answer else { return request }
        var adapted = request
        switch answer {
        case .basic:
            adapted.setValue(try credential.basicAuthorization(url: request.url), forHTTPHeaderField: "Authorization")
        case .digest(let challenge, let count):
            if credential.username.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw CourierError(.invalidRequest, "The user name for Digest authentication contains a control character.", url: request.url)
            }
            let uri = Self.requestTarget(of: request.url)
            adapted.setValue(
                challenge.authorization(
                    username: credential.username, password: credential.password,
                    method: request.httpMethod ?? "GET", uri: uri, nonceCount: count,
                    clientNonce: DigestChallenge.makeClientNonce()),
                forHTTPHeaderField: "Authorization")
        }
        return adapted
    }

    /// The challenge to answer for a response with `status` to `sent`, or nil; with `commit`, it
    /// becomes the answer of the next attempts.
    private func chosenChallenge(status: Int, sent: URLRequest, field: String?, commit: Bool) -> Answer? {
        guard status == 401, let field else { return nil }
        let challenges = HTTPChallenge.parse(field)
        let digest = challenges.compactMap(DigestChallenge.init).max { $0.algorithm.strength < $1.algorithm.strength }
        let answer: Answer
        if let digest {
            answer = .digest(digest, nonceCount: 0)
        } else if challenges.contains(where: { $0.scheme == "basic" }) {
            answer = .basic
        } else {
            return nil
        }
        let origin = sent.url?.origin
        return state.withLock { state -> Answer? in
            guard let expected = state.origin, expected == origin, state.answered < Self.maximumAnswers else { return nil }
            // Already answered: only a Digest nonce the server calls stale is worth another try.
            if state.answered > 0 {
                guard case .digest(let challenge, _) = answer, challenge.stale else { return nil }
            }
            if commit {
                state.answered += 1
                state.answer = answer
            }
            return answer
        }
    }

    /// The request target as Digest's `uri` names it: the path and query as sent.
    static func requestTarget(of url: URL?) -> String {
        guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }
}

extension Request {
    /// Sends `Authorization: Basic …` with every attempt of this request (preemptively: no
    /// round trip for a challenge), unless the request sets `Authorization` itself.
    ///
    /// A user name containing `:`, or a control character in either part, cannot be sent as
    /// Basic: the request fails with ``CourierError/Kind-swift.struct/invalidRequest`` (reported
    /// through the adapter that found it) and nothing is sent.
    ///
    /// ```swift
    /// let me = try await api.request("me").authenticate(username: "bob", password: "secret")
    ///     .validate().serializingDecodable(User.self).value
    /// ```
    /// To answer a server's challenge instead (Basic or Digest), use ``authenticate(with:)-(HTTPCredential)``.
    @discardableResult
    public nonisolated func authenticate(username: String, password: String) -> Self {
        let adapter = PreemptiveBasicAdapter(credential: HTTPCredential(username: username, password: password))
        engineAccess.perform { $0.interceptors.append(Interceptor(adapters: [adapter])) }
        return self
    }

    /// Answers the server's `401 Unauthorized` challenge with `credential`: Basic, or Digest
    /// (RFC 7616: MD5, SHA-256 and their `-sess` forms, `qop=auth`), whichever the server asks for
    /// (the strongest Digest when it offers several). The request is sent once without
    /// credentials, and once more with the answer; a server that rejects the answer gets its 401
    /// delivered as it is (add `validate()` to make that a failure). Courier does this itself, so
    /// it works on every transport; challenges from another origin than the request's (after a
    /// redirect) are not answered.
    ///
    /// ```swift
    /// let report = try await api.request("reports/1")
    ///     .authenticate(with: HTTPCredential(username: "bob", password: "secret"))
    ///     .validate().serializingData().value
    /// ```
    @discardableResult
    public nonisolated func authenticate(with credential: HTTPCredential) -> Self {
        let responder = ChallengeResponder(credential: credential)
        engineAccess.perform { engine in
            engine.interceptors.append(responder)
            engine.validators.append(responder.validator)
        }
        return self
    }

    /// Answers the server's challenge with the user name and password of `credential` (see
    /// ``authenticate(with:)-(HTTPCredential)``); Alamofire's spelling.
    ///
    /// ```swift
    /// api.request("reports/1").authenticate(with: URLCredential(user: "bob", password: "secret", persistence: .none))
    /// ```
    @discardableResult
    public nonisolated func authenticate(with credential: URLCredential) -> Self {
        authenticate(with: HTTPCredential(credential))
    }
}
