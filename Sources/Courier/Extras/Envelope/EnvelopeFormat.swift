import Foundation

/// How an API wraps its answers in a JSON envelope such as `{"code": 0, "message": "ok", "data": {…}}`:
/// which keys hold the application code, the message and the payload, and which codes mean success.
///
/// ```swift
/// let format = EnvelopeFormat(codeKey: "code", messageKey: "message", successCodes: [0])
/// let user = try await api.request("users/42")
///     .validate(envelope: format)                      // code ∉ successCodes → CourierError(.serverError, …)
///     .serializingEnvelope(User.self, format: format)  // decodes "data" as User
///     .value
/// ```
/// The keys are top-level members of the body. A code may be a JSON number or a string holding an
/// integer (`"0"`); a missing or non-integer code makes the body "not an envelope" (`.validationFailed`).
public struct EnvelopeFormat: Sendable, Hashable {
    /// The member holding the application code.
    public var codeKey: String
    /// The member holding the server's message, if it sends one.
    public var messageKey: String
    /// The member holding the payload.
    public var dataKey: String
    /// The codes that mean success.
    public var successCodes: Set<Int>

    /// `{"code", "message", "data"}` with success code `0`.
    public static let standard = EnvelopeFormat()

    /// Creates a format; the defaults describe `{"code": 0, "message": "…", "data": …}`.
    public init(codeKey: String = "code", messageKey: String = "message", dataKey: String = "data", successCodes: Set<Int> = [0]) {
        self.codeKey = codeKey
        self.messageKey = messageKey
        self.dataKey = dataKey
        self.successCodes = successCodes
    }
}

/// The application-level error a JSON envelope reported: the `underlyingError` of a
/// `CourierError` of kind `.serverError`.
///
/// ```swift
/// if error.kind == .serverError, let envelope = error.underlyingError as? EnvelopeError, envelope.code == 401 { … }
/// ```
public struct EnvelopeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code the server sent.
    public let code: Int
    /// The message the server sent, if any.
    public let message: String?

    /// Creates an envelope error.
    public init(code: Int, message: String?) {
        self.code = code
        self.message = message
    }

    /// `code 1001: message`.
    public var description: String {
        message.map { "code \(code): \($0)" } ?? "code \(code)"
    }
}

extension EnvelopeFormat {
    /// What an envelope says: its code and message.
    struct Header {
        let code: Int
        let message: String?
    }

    /// Reads the code and message of `data`; throws `.validationFailed` when the body is not an envelope.
    func header(of data: Data, responseCode: Int?, url: URL?) throws(CourierError) -> Header {
        let json: JSON
        do {
            json = try JSON(parsing: data)
        } catch {
            throw CourierError(
                .validationFailed, "The response is not a JSON envelope: \(error.message)",
                responseCode: responseCode, underlyingError: error, url: url)
        }
        guard case .object(let members) = json else {
            throw CourierError(
                .validationFailed, "The response is not a JSON envelope: the body is not a JSON object.",
                responseCode: responseCode, url: url)
        }
        let code: Int?
        switch members[codeKey] {
        case .number?: code = members[codeKey]?.intValue
        case .string(let text)?: code = Int(text.trimmingCharacters(in: .whitespaces))
        default: code = nil
        }
        guard let code else {
            throw CourierError(
                .validationFailed, "The response is not a JSON envelope: \"\(codeKey)\" is missing or not an integer.",
                responseCode: responseCode, url: url)
        }
        let message = members[messageKey]?.stringValue
        return Header(code: code, message: message?.isEmpty == true ? nil : message)
    }

    /// The `.serverError` for a code that is not a success code, else `nil`.
    func failure(for header: Header, responseCode: Int?, url: URL?) -> CourierError? {
        guard !successCodes.contains(header.code) else { return nil }
        let text = header.message.map { "\($0) (code \(header.code))" } ?? "The server answered with code \(header.code)."
        return CourierError(
            .serverError, text, responseCode: responseCode,
            underlyingError: EnvelopeError(code: header.code, message: header.message), url: url)
    }
}
