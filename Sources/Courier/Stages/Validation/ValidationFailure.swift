extension CourierError {
    /// Why a built-in validator rejected a response, readable as fields rather than from the
    /// message: Alamofire's `ResponseValidationFailureReason`.
    ///
    /// ```swift
    /// let response = await api.request("users/42").validate().serializingData().response
    /// switch response.error?.validationFailure {
    /// case .unacceptableStatusCode(let code)?: print("status", code)
    /// case .unacceptableContentType(let acceptable, let actual)?: print(actual, "is not one of", acceptable)
    /// case .missingContentType(let acceptable)?: print("no Content-Type; wanted", acceptable)
    /// default: break
    /// }
    /// ```
    public enum ValidationFailure: Sendable, Hashable {
        /// The status code is not one of the acceptable ones.
        case unacceptableStatusCode(Int)
        /// The `Content-Type` (`actual`, without parameters) matches none of `acceptable`.
        case unacceptableContentType(acceptable: [String], actual: String)
        /// The response has a body but no (parsable) `Content-Type`, and `acceptable` does not allow any type.
        case missingContentType(acceptable: [String])
        /// The JSON body does not have the shape `validate(json:)` asked for; the text names the first mismatch.
        case unexpectedJSONShape(String)
        /// The body is not JSON, so `validate(json:)` could not check its shape.
        case bodyIsNotJSON

        /// The status code, for ``unacceptableStatusCode(_:)``.
        public var statusCode: Int? {
            if case .unacceptableStatusCode(let code) = self { code } else { nil }
        }
    }
}
