import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A user name and password for HTTP authentication: sent preemptively as Basic with
/// `request.authenticate(username:password:)`, or used to answer a server's Basic or Digest
/// challenge with `request.authenticate(with:)` or ``SessionConfiguration/credential``.
///
/// ```swift
/// let credential = HTTPCredential(username: "bob", password: "secret")
/// let report = try await api.request("reports/1").authenticate(with: credential).validate().serializingData().value
/// ```
public struct HTTPCredential: Sendable, Hashable, CustomStringConvertible {
    /// The user name.
    public let username: String
    /// The password.
    public let password: String

    /// Creates a credential.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Takes the user name and password of a `URLCredential` (an empty one when it has none).
    public init(_ credential: URLCredential) {
        self.init(username: credential.user ?? "", password: credential.password ?? "")
    }

    /// `HTTPCredential(bob, password: ******)`: the password never appears in logs.
    public var description: String { "HTTPCredential(\(username), password: ******)" }

    /// `Basic base64(user:password)`, or `.invalidRequest` when the user name cannot be sent that
    /// way (RFC 7617: it may not contain `:`, and neither part may contain control characters).
    func basicAuthorization(url: URL?) throws(CourierError) -> String {
        if username.contains(":") {
            throw CourierError(
                .invalidRequest,
                "The user name for Basic authentication contains \":\", which Basic cannot send "
                    + "(RFC 7617 §2): the server would read the user name as ending there.", url: url)
        }
        if let bad = (username + password).unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw CourierError(
                .invalidRequest,
                "The user name or password for Basic authentication contains the control character "
                    + "U+\(String(bad.value, radix: 16, uppercase: true)), which Basic cannot send (RFC 7617 §2).", url: url)
        }
        return "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }
}

/// Puts `Authorization: Basic …` on every attempt of one request, unless the request already has
/// an `Authorization` header of its own.
struct PreemptiveBasicAdapter: RequestAdapter {
    let credential: HTTPCredential

    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        let value = try credential.basicAuthorization(url: request.url)
        guard request.value(forHTTPHeaderField: "Authorization") == nil else { return request }
        var adapted = request
        adapted.setValue(value, forHTTPHeaderField: "Authorization")
        return adapted
    }
}
