import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks a JSON envelope's code and decodes its payload (the `data` member) into a `Decodable`.
///
/// A code outside the format's success codes fails with `CourierError(.serverError, <server's
/// message> (code N))` and an ``EnvelopeError`` as `underlyingError`; a body that is not an
/// envelope fails with `.validationFailed`. A missing or `null` payload decodes as `T`'s empty
/// value (``Empty``, or `nil` for an `Optional`). The payload is decoded from the bytes the
/// server sent, so 64-bit numbers and custom decoding strategies work as they would on the whole body.
public struct EnvelopeResponseSerializer<T: Decodable & Sendable>: ResponseSerializer {
    /// The envelope's keys and success codes.
    public let format: EnvelopeFormat
    /// The decoder for the payload.
    public let decoder: any DataDecoder
    /// Status codes whose empty body is valid.
    public let emptyResponseCodes: Set<Int>
    /// Methods whose empty body is valid.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    public init(
        format: EnvelopeFormat = .standard, decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = Self.defaultEmptyRequestMethods
    ) {
        self.format = format
        self.decoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// The decoded payload.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> T {
        if let error { throw error }
        let url = request?.url
        let status = response?.statusCode
        if try checkEmpty(request: request, statusCode: response?.statusCode, data: data) { return try emptyValue(status: status, url: url) }
        let body = data ?? Data()
        let header = try format.header(of: body, responseCode: status, url: url)
        if let failure = format.failure(for: header, responseCode: status, url: url) { throw failure }
        guard let payload = JSONMemberScanner.value(of: format.dataKey, in: body),
            payload != Data("null".utf8)
        else { return try emptyValue(status: status, url: url) }
        do {
            return try decoder.decode(T.self, from: payload)
        } catch let error as DecodingError {
            throw CourierError(
                .serializationFailed, "Decoding \(T.self) from \"\(format.dataKey)\" failed: \(error.readableDescription)",
                responseCode: status, underlyingError: error, url: url)
        } catch {
            throw CourierError(
                .serializationFailed, "Decoding \(T.self) from \"\(format.dataKey)\" failed: \(error)",
                responseCode: status, underlyingError: error, url: url)
        }
    }

    /// `T`'s value for "no payload": ``EmptyResponse/emptyValue()``, `nil` for optionals.
    private func emptyValue(status: Int?, url: URL?) throws -> T {
        if let empty = T.self as? any EmptyResponse.Type, let value = empty.emptyValue() as? T { return value }
        if let value = try? decoder.decode(T.self, from: Data("null".utf8)) { return value }
        throw CourierError(
            .emptyResponse, "The envelope has no \"\(format.dataKey)\", and \(T.self) has no empty value (decode Empty or an Optional).",
            responseCode: status, url: url)
    }
}

extension Request {
    /// Rejects responses whose JSON envelope carries a code outside `format.successCodes`, with
    /// `CourierError(.serverError, "<server's message> (code N)")` and an ``EnvelopeError`` as
    /// `underlyingError`; a body that is not an envelope fails with `.validationFailed`.
    ///
    /// It looks at every response, whatever its status, so an HTTP 500 carrying
    /// `{"code": 1001, "message": "database down"}` reports the server's message. Empty 204 and
    /// 205 responses pass.
    @discardableResult
    public nonisolated func validate(envelope format: EnvelopeFormat = .standard) -> Self {
        addValidator { input in
            let status = input.statusCode
            let url = input.request?.url
            if input.isBodyEmpty, [204, 205].contains(status) { return nil }
            do {
                let header = try format.header(of: input.bodyData() ?? Data(), responseCode: status, url: url)
                return format.failure(for: header, responseCode: status, url: url)
            } catch let error as CourierError {
                return error
            } catch {
                return CourierError(
                    .validationFailed, "The response body could not be read: \(error)",
                    responseCode: status, underlyingError: error, url: url)
            }
        }
    }
}

extension DataResponseRequest {
    /// The envelope's payload decoded as `type`, after checking its code (see ``EnvelopeResponseSerializer``).
    public nonisolated func serializingEnvelope<T: Decodable & Sendable>(
        _ type: T.Type = T.self, format: EnvelopeFormat = .standard, decoder: any DataDecoder = JSONDecoder(),
        automaticallyCancelling: Bool = true
    ) -> DataTask<T> {
        serializing(using: EnvelopeResponseSerializer<T>(format: format, decoder: decoder), automaticallyCancelling: automaticallyCancelling)
    }

    /// Calls `completionHandler` with the envelope's payload decoded as `type`, after checking its code.
    @discardableResult
    public nonisolated func responseEnvelope<T: Decodable & Sendable>(
        of type: T.Type = T.self, format: EnvelopeFormat = .standard, queue: DispatchQueue? = nil,
        decoder: any DataDecoder = JSONDecoder(),
        completionHandler: @escaping @Sendable (DataResponse<T, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: EnvelopeResponseSerializer<T>(format: format, decoder: decoder), completionHandler: completionHandler)
    }
}
