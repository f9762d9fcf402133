// Fuzz target: URL-encoded form encoding (URLEncodedFormEncoder, PercentEncoding).
//
// Values come from the input: the raw text as a key and as a value, and, when the input is a JSON
// object, that object (nested objects, arrays, nulls). Properties, for every array, Boolean and
// key-ordering option: the query and the form body are the same text; they split at `&` into one
// `name=value` per encoded pair, using only unreserved characters, `?`, `/` and `%XX` escapes;
// percent-decoding each name and value gives back the pair exactly; string members of a JSON
// object come out as their own pair, and null members produce no pair.
import CourierSupport
import Foundation
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    // The text is both a key and a value (a dictionary literal would trap when the text is "key").
    let flat = Dictionary([("key", text), (text, "value")], uniquingKeysWith: { _, last in last })
    check(flat, strings: flat, nulls: [])
    if case .object(let members)? = try? JSON(parsing: Data(bytes)) {
        var strings: [String: String] = [:]
        var nulls: [String] = []
        for (key, value) in members {
            if case .string(let string) = value { strings[key] = string }
            if case .null = value { nulls.append(key) }
        }
        check(members, strings: strings, nulls: nulls)
    }
    return 0
}

private func check<T: Encodable>(_ value: T, strings: [String: String], nulls: [String]) {
    for arrays in [URLEncodedFormEncoder.ArrayEncoding.brackets, .noBrackets, .indexInBrackets] {
        for (bools, ordering) in [(URLEncodedFormEncoder.BoolEncoding.literal, URLEncodedFormEncoder.KeyOrdering.sorted),
                                  (.numeric, .encodingOrder)] {
            let encoder = URLEncodedFormEncoder(arrayEncoding: arrays, boolEncoding: bools, keyOrdering: ordering)
            let pairs: [(name: String, value: String)]
            let query: String
            let body: Data
            do {
                pairs = try encoder.encode(value)
                query = try encoder.encodeQuery(value)
                body = try encoder.encodeFormBody(value)
            } catch {
                preconditionFailure("a keyed value failed to encode: \(error)")
            }
            precondition(Data(query.utf8) == body, "query and form body differ")
            let pieces = query.isEmpty ? [] : query.split(separator: "&", omittingEmptySubsequences: false)
            precondition(pieces.count == pairs.count, "\(pairs.count) pairs became \(pieces.count) query pieces")
            for (piece, pair) in zip(pieces, pairs) {
                let halves = piece.split(separator: "=", omittingEmptySubsequences: false)
                precondition(halves.count == 2, "piece \(piece) does not split into name=value")
                precondition(percentDecoded(halves[0]) == pair.name, "name \(halves[0]) does not decode to \(pair.name.debugDescription)")
                precondition(percentDecoded(halves[1]) == pair.value, "value \(halves[1]) does not decode to \(pair.value.debugDescription)")
            }
            for (key, string) in strings {
                precondition(pairs.contains { $0.name == key && $0.value == string }, "string member \(key.debugDescription) lost")
            }
            for key in nulls {
                precondition(!pairs.contains { $0.name == key || $0.name.hasPrefix(key + "[") }, "null member \(key.debugDescription) encoded")
            }
        }
    }
}

/// Decodes `%XX` escapes, requiring every other byte to be one that needs no escaping.
private func percentDecoded(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    func hex(_ byte: UInt8?) -> UInt8? {
        guard let byte else { return nil }
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    while let byte = iterator.next() {
        if byte == UInt8(ascii: "%") {
            guard let high = hex(iterator.next()), let low = hex(iterator.next()) else { return nil }
            bytes.append(high << 4 | low)
        } else {
            guard PercentEncoding.isUnescaped(byte) else { return nil }
            bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}
