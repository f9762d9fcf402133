import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a validator sees: the request sent, the response, and the body (in memory or on disk).
public struct ValidationInput: Sendable {
    /// The last request sent.
    public let request: URLRequest?
    let responseHead: LazyHTTPResponse
    let body: RequestCompletion.Body

    init(request: URLRequest?, response: LazyHTTPResponse, body: RequestCompletion.Body) {
        self.request = request
        self.responseHead = response
        self.body = body
    }

    /// The response.
    public var response: HTTPURLResponse { responseHead.httpResponse }
    /// The status code (cheaper than going through ``response``).
    public var statusCode: Int { responseHead.statusCode }
    /// A response header's value, compared case-insensitively (cheaper than going through ``response``).
    public func header(_ name: String) -> String? { responseHead.header(name) }

    /// The body, for requests that keep it in memory.
    public var data: Data? { body.data }
    /// The downloaded file, for downloads.
    public var fileURL: URL? { body.fileURL }

    /// Whether there is no body at all (empty data or an empty file).
    var isBodyEmpty: Bool {
        switch body {
        case .memory(let data): return data?.isEmpty ?? true
        case .file(let url):
            guard let url, let size = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber else { return true }
            return size.int64Value == 0
        }
    }

    /// The body's bytes, reading the file for downloads.
    func bodyData() throws -> Data? {
        switch body {
        case .memory(let data): return data
        case .file(let url): return try url.map { try Data(contentsOf: $0, options: .mappedIfSafe) }
        }
    }
}

extension RequestCompletion.Body {
    var data: Data? { if case .memory(let data) = self { data } else { nil } }
    var fileURL: URL? { if case .file(let url) = self { url } else { nil } }
}

/// The result a custom validation closure returns.
public typealias ValidationResult = Result<Void, any Error>

/// One validation rule; `nil` means the response passed.
struct Validator: Sendable {
    let validate: @Sendable (ValidationInput) -> CourierError?
}

extension Request {
    /// Rejects responses whose status code is not in `acceptableStatusCodes`
    /// (an empty set rejects everything).
    @discardableResult
    public nonisolated func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self where S.Element == Int {
        let acceptable = Set(acceptableStatusCodes)
        return addValidator { input in
            let code = input.statusCode
            guard !acceptable.contains(code) else { return nil }
            return CourierError(
                validationFailure: .unacceptableStatusCode(code), "Response status code \(code) was unacceptable.",
                responseCode: code, url: input.request?.url)
        }
    }

    /// Rejects responses whose `Content-Type` matches none of `acceptableContentTypes`
    /// (wildcards such as `application/*` allowed, parameters ignored). Empty bodies always pass.
    @discardableResult
    public nonisolated func validate<S: Sequence & Sendable>(contentType acceptableContentTypes: S) -> Self where S.Element == String {
        let acceptable = Array(acceptableContentTypes)
        return addValidator { input in Self.contentTypeFailure(input, acceptable: acceptable) }
    }

    /// Requires a 2xx status and a `Content-Type` allowed by the request's `Accept` header (`*/*` when it has none).
    @discardableResult
    public nonisolated func validate() -> Self {
        addValidator { input in
            let code = input.statusCode
            guard (200..<300).contains(code) else {
                return CourierError(
                    validationFailure: .unacceptableStatusCode(code),
                    "Response status code \(code) was unacceptable (expected 2xx).",
                    responseCode: code, url: input.request?.url)
            }
            let accept = input.request?.value(forHTTPHeaderField: "Accept")
            let acceptable = accept.map { MIMEType.acceptableTypes(fromAcceptHeader: $0).map(\.description) } ?? ["*/*"]
            return Self.contentTypeFailure(input, acceptable: acceptable.isEmpty ? ["*/*"] : acceptable)
        }
    }

    /// Requires the body to be JSON of the given shape; the error names the first mismatching path.
    @discardableResult
    public nonisolated func validate(json shape: JSONShape) -> Self {
        addValidator { input in
            let code = input.statusCode
            do {
                let json = try JSON(parsing: input.bodyData() ?? Data())
                guard let mismatch = shape.firstMismatch(in: json) else { return nil }
                return CourierError(
                    validationFailure: .unexpectedJSONShape("\(mismatch)"),
                    "Response JSON does not have the expected shape: \(mismatch).",
                    responseCode: code, url: input.request?.url)
            } catch {
                return CourierError(
                    validationFailure: .bodyIsNotJSON, "Response body is not JSON, so its shape cannot be checked: \(error)",
                    responseCode: code, underlyingError: error, url: input.request?.url)
            }
        }
    }

    /// Adds a custom rule: return `.failure(error)` (or throw) to reject the response.
    @discardableResult
    public nonisolated func validate(_ validation: @escaping @Sendable (ValidationInput) throws -> ValidationResult) -> Self {
        addValidator { input in
            do {
                switch try validation(input) {
                case .success: return nil
                case .failure(let error): return Self.wrapValidationError(error, input)
                }
            } catch {
                return Self.wrapValidationError(error, input)
            }
        }
    }

    nonisolated func addValidator(_ validate: @escaping @Sendable (ValidationInput) -> CourierError?) -> Self {
        engineAccess.perform { $0.validators.append(Validator(validate: validate)) }
        return self
    }

    static func wrapValidationError(_ error: any Error, _ input: ValidationInput) -> CourierError {
        if let error = error as? CourierError { return error }
        return CourierError(
            .validationFailed, "Custom validation failed: \(error)", responseCode: input.statusCode,
            underlyingError: error, url: input.request?.url)
    }

    static func contentTypeFailure(_ input: ValidationInput, acceptable: [String]) -> CourierError? {
        guard !input.isBodyEmpty else { return nil }
        let code = input.statusCode
        // The list for the message is built only for a failure: a passing response allocates nothing for it.
        var list: String { acceptable.sorted().joined(separator: ", ") }
        guard let header = input.header("Content-Type"), let responseType = MIMEType(header) else {
            if acceptable.contains(where: { MIMEType($0) == .any }) { return nil }
            return CourierError(
                validationFailure: .missingContentType(acceptable: acceptable),
                "The response has no Content-Type; acceptable: \(list).",
                responseCode: code, url: input.request?.url)
        }
        guard !acceptable.contains(where: { MIMEType($0)?.matches(responseType) == true }) else { return nil }
        return CourierError(
            validationFailure: .unacceptableContentType(acceptable: acceptable, actual: responseType.description),
            "Response Content-Type \"\(responseType)\" was unacceptable; acceptable: \(list).",
            responseCode: code, url: input.request?.url)
    }
}
