import CCodecs

/// A content coding the curl transport undoes itself (libcurl's own decoding stays off).
enum CurlContentCoding: String, Sendable, CaseIterable {
    case gzip, deflate, br, zstd

    /// The coding a `Content-Encoding` token names (`x-gzip` is gzip, RFC 9110 §8.4.1.3); `nil` for
    /// one Courier does not know.
    init?(token: Substring) {
        let name = token.lowercased()
        switch name {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        case "br": self = .br
        case "zstd": self = .zstd
        default: return nil
        }
    }

    var cCoding: ccodecs_coding {
        switch self {
        case .gzip: CCODECS_CODING_GZIP
        case .deflate: CCODECS_CODING_DEFLATE
        case .br: CCODECS_CODING_BROTLI
        case .zstd: CCODECS_CODING_ZSTD
        }
    }

    /// Whether this process has the library for the coding.
    var isAvailable: Bool { ccodecs_decoder_available(cCoding) == 1 }

    /// What the transport advertises when the request has no `Accept-Encoding`: every coding it can
    /// decode here, in libcurl's order (`"deflate, gzip, br, zstd"`); `nil` when there is none.
    static let advertised: String? = {
        let available = [deflate, gzip, br, zstd].filter(\.isAvailable)
        return available.isEmpty ? nil : available.map(\.rawValue).joined(separator: ", ")
    }()
}

/// Undoes the content codings of one response body, producing decoded bytes only into the room the
/// caller offers: how much decoded data exists at any time is the caller's choice, whatever the
/// compression ratio. Wire bytes not yet needed stay where the caller has them.
///
/// Codings are undone in the reverse order of `Content-Encoding` (RFC 9110 §8.4); between two
/// stages sits one buffer of ``stageBufferSize`` bytes. Confined to the curl event loop's passes.
final class CurlContentDecoding {
    /// Why decoding cannot go on: the message of the `.invalidResponse` the transfer fails with.
    struct Failure: Error {
        let message: String
    }

    /// More codings than this in one `Content-Encoding` fail the response (libcurl's limit too).
    static let maximumCodings = 5
    /// The buffer between two stacked codings.
    static let stageBufferSize = 64 << 10

    private final class Stage {
        let coding: CurlContentCoding
        let decoder: OpaquePointer
        /// The coded stream ended (zstd: the last frame ended and nothing followed yet).
        var ended = false
        /// Input for this stage made by the previous one (stages after the first).
        var buffer: UnsafeMutableRawBufferPointer?
        var start = 0, end = 0

        init(coding: CurlContentCoding, decoder: OpaquePointer, buffered: Bool) {
            self.coding = coding
            self.decoder = decoder
            if buffered { buffer = .allocate(byteCount: CurlContentDecoding.stageBufferSize, alignment: 1) }
        }

        deinit {
            ccodecs_decoder_destroy(decoder)
            buffer?.deallocate()
        }
    }

    /// The codings in the order they are undone.
    let codings: [CurlContentCoding]
    private var stages: [Stage] = []
    /// Coded bytes taken from the wire so far.
    private(set) var wireBytes: Int64 = 0

    /// `nil` for a `Content-Encoding` that needs no decoding (absent, empty or `identity`); throws
    /// for one that names a coding Courier cannot undo here, or too many codings.
    static func make(contentEncoding value: String) throws(Failure) -> CurlContentDecoding? {
        var codings: [CurlContentCoding] = []
        var count = 0
        for token in value.split(separator: ",") {
            let name = String(token).trimmedASCII
            guard !name.isEmpty, !name.caseInsensitiveEquals("identity") else { continue }
            count += 1
            guard count <= maximumCodings else {
                throw Failure(message: "The response names more than \(maximumCodings) content codings (Content-Encoding: \(value)).")
            }
            guard let coding = CurlContentCoding(token: name) else {
                throw Failure(message: "The response has a content coding Courier cannot decode: \(name).")
            }
            guard coding.isAvailable else {
                throw Failure(message: "The response has a content coding whose library is not available here: \(name).")
            }
            codings.append(coding)
        }
        return codings.isEmpty ? nil : CurlContentDecoding(codings: codings.reversed())
    }

    private init(codings: [CurlContentCoding]) {
        self.codings = codings
    }

    /// Whether every coded stream ended with nothing after it: the body is complete.
    var isComplete: Bool {
        !stages.isEmpty && stages.allSatisfy { $0.ended && $0.start == $0.end }
    }

    /// Decodes into `output`, taking what it needs from the front of `wire` (which is advanced).
    /// Returns the bytes produced; fewer than `output.count` means `wire` is used up and nothing
    /// more can be produced until more arrives (or the body ended).
    func decode(_ wire: inout UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
        if stages.isEmpty { try open() }
        let before = wire.count
        defer { wireBytes += Int64(before - wire.count) }
        return try fill(stages.count - 1, output, wire: &wire)
    }

    private func open() throws(Failure) {
        for (index, coding) in codings.enumerated() {
            guard let decoder = ccodecs_decoder_create(coding.cCoding) else {
                throw Failure(message: "Courier could not start a \(coding.rawValue) decoder (out of memory).")
            }
            stages.append(Stage(coding: coding, decoder: decoder, buffered: index > 0))
        }
    }

    /// Fills `output` from stage `index`; see ``decode(_:into:)``.
    private func fill(_ index: Int, _ output: UnsafeMutableRawBufferPointer, wire: inout UnsafeRawBufferPointer) throws(Failure) -> Int {
        let stage = stages[index]
        var produced = 0
        while produced < output.count {
            if index > 0, stage.start == stage.end, let buffer = stage.buffer {
                stage.start = 0
                stage.end = try fill(index - 1, buffer, wire: &wire)
            }
            let input: UnsafeRawBufferPointer
            if index == 0 {
                input = wire
            } else if let buffer = stage.buffer {
                input = UnsafeRawBufferPointer(rebasing: buffer[stage.start..<stage.end])
            } else {
                input = UnsafeRawBufferPointer(start: nil, count: 0)
            }
            if stage.ended {
                // A coding that ended takes nothing more (zstd starts its next frame instead).
                guard stage.coding == .zstd, !input.isEmpty else {
                    if !input.isEmpty { throw Failure(message: "The response body goes on after the end of its \(stage.coding.rawValue) data.") }
                    break
                }
            }
            var consumed = 0, made = 0
            let room = UnsafeMutableRawBufferPointer(rebasing: output[produced...])
            let status = ccodecs_decoder_run(
                stage.decoder, input.baseAddress, input.count, &consumed,
                room.baseAddress, room.count, &made)
            if index == 0 {
                wire = UnsafeRawBufferPointer(rebasing: wire[consumed...])
            } else {
                stage.start += consumed
            }
            produced += made
            if consumed > 0 { stage.ended = false }
            switch status {
            case CCODECS_DECODE_ERROR:
                let reason = String(cString: ccodecs_decoder_message(stage.decoder))
                throw Failure(message: "The response body is not valid \(stage.coding.rawValue) data: \(reason).")
            case CCODECS_DECODE_END:
                stage.ended = true
            default:
                // No progress with room left: the stage needs input that is not there yet.
                if consumed == 0, made == 0 {
                    guard input.isEmpty else {
                        throw Failure(message: "The \(stage.coding.rawValue) decoder stopped making progress.")
                    }
                    return produced
                }
            }
        }
        return produced
    }
}
