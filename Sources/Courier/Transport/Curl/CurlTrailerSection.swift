/// The trailer section libcurl hands over line by line after a response body (HTTP/1.1 chunked or
/// HTTP/2): each field kept in wire order, repeated names apart, the whole section held to a byte
/// limit like the head. Pure: ``CurlExchange`` acts on what ``receive(_:)`` answers.
struct CurlTrailerSection {
    /// What one line did to the section.
    enum Outcome: Equatable {
        /// A field, now in ``fields``.
        case kept
        /// The blank line that ends the section, or a status line: nothing to keep.
        case skipped
        /// Not a field: the body's framing was wrong (older libcurls pass such lines on).
        case notAField
        /// The section passed ``limit`` bytes.
        case tooLarge
    }

    /// The most bytes the section may take.
    let limit: Int
    /// The bytes of the section read so far.
    private(set) var bytes = 0
    /// The fields in wire order, once the first arrived.
    private(set) var fields: HTTPHeaders?

    init(limit: Int) {
        self.limit = limit
    }

    mutating func receive(_ line: UnsafeRawBufferPointer) -> Outcome {
        guard CurlResponseParser.isTrailerField(line) else { return .notAField }
        bytes += line.count
        guard bytes <= limit else { return .tooLarge }
        guard let field = CurlResponseParser.trailerField(line) else { return .skipped }
        if fields == nil { fields = HTTPHeaders() }
        fields?.appendDistinct(name: field.name, value: field.value)
        return .kept
    }
}
