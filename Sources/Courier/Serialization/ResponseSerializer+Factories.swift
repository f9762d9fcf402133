import Foundation

// Alamofire's serializer factories, for `response(using:)` and `serializing(using:)`:
// `api.request("x").serializing(using: .decodable(of: User.self))`.

extension ResponseSerializer where Self == DataResponseSerializer {
    /// The body as `Data`.
    ///
    /// ```swift
    /// let data = try await api.request("blob").serializing(using: .data).value
    /// ```
    public static var data: DataResponseSerializer { DataResponseSerializer() }

    /// The body as `Data`, with a preprocessor and your own empty-body rules.
    ///
    /// ```swift
    /// let data = try await api.request("blob").serializing(using: .data(emptyResponseCodes: [200, 204])).value
    /// ```
    public static func data(
        dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponseSerializer {
        DataResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}

extension ResponseSerializer where Self == StringResponseSerializer {
    /// The body as text, in the response's charset (ISO-8859-1 when it names none).
    ///
    /// ```swift
    /// let text = try await api.request("readme").serializing(using: .string).value
    /// ```
    public static var string: StringResponseSerializer { StringResponseSerializer() }

    /// The body as text in `encoding` (the response's charset when `nil`), with a preprocessor
    /// and your own empty-body rules.
    ///
    /// ```swift
    /// let text = try await api.request("legacy").serializing(using: .string(encoding: .isoLatin1)).value
    /// ```
    public static func string(
        encoding: String.Encoding? = nil, dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> StringResponseSerializer {
        StringResponseSerializer(
            dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}

extension ResponseSerializer where Self == JSONResponseSerializer {
    /// The body parsed as ``JSON``.
    ///
    /// ```swift
    /// let json = try await api.request("config").serializing(using: .json).value
    /// ```
    public static var json: JSONResponseSerializer { JSONResponseSerializer() }

    /// The body parsed as ``JSON``, with a preprocessor and your own empty-body rules.
    ///
    /// ```swift
    /// let json = try await api.request("config").serializing(using: .json(dataPreprocessor: .jsonSecurityPrefix)).value
    /// ```
    public static func json(
        dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods
    ) -> JSONResponseSerializer {
        JSONResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}

extension ResponseSerializer {
    /// The body decoded as `type` (with `JSONDecoder()` unless you give a decoder), with an
    /// optional preprocessor and your own empty-body rules.
    ///
    /// ```swift
    /// let user = try await api.request("users/42").serializing(using: .decodable(of: User.self)).value
    /// api.request("users/42").response(using: .decodable(of: User.self, dataPreprocessor: .jsonSecurityPrefix)) { response in }
    /// ```
    public static func decodable<T: Decodable & Sendable>(
        of type: T.Type, decoder: any DataDecoder = JSONDecoder(), dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DecodableResponseSerializer<T> where Self == DecodableResponseSerializer<T> {
        DecodableResponseSerializer(
            dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}
