// Fuzz target: the JSON parser (JSONParser, JSON.init(parsing:)) and writer (JSON.data).
//
// Properties: parsing never traps; a parsed value written compactly, pretty-printed, or with
// unsorted keys parses back to an equal value, and so does the value through Foundation's
// JSONDecoder and JSONEncoder (JSON's Codable conformance); a failure is `.serializationFailed` with a
// JSON.ParseError whose offset lies within the input and whose line and column are positive.
import Foundation
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    let value: JSON
    do {
        value = try JSON(parsing: data)
    } catch {
        precondition(error.kind == .serializationFailed, "unexpected error kind \(error.kind)")
        guard let parseError = error.underlyingError as? JSON.ParseError else {
            preconditionFailure("a parse failure without a JSON.ParseError: \(error)")
        }
        precondition((0...count).contains(parseError.offset), "offset \(parseError.offset) outside 0...\(count)")
        precondition(parseError.line >= 1 && parseError.column >= 1, "line/column not positive: \(parseError)")
        return 0
    }
    for (pretty, sorted) in [(false, true), (true, true), (false, false)] {
        let text = value.data(prettyPrinted: pretty, sortedKeys: sorted)
        let again: JSON
        do {
            again = try JSON(parsing: text)
        } catch {
            preconditionFailure("written JSON does not parse back (pretty \(pretty)): \(error)\n\(String(decoding: text, as: UTF8.self))")
        }
        precondition(again == value, "round trip changed the value (pretty \(pretty)):\n\(value)\n\(again)")
    }
    // JSON's Codable conformance, through Foundation's coders, keeps the value too.
    do {
        let decoded = try JSONDecoder().decode(JSON.self, from: value.data())
        precondition(decoded == value, "JSONDecoder changed the value:\n\(value)\n\(decoded)")
        let encoded = try JSONEncoder().encode(value)
        let reparsed = try JSON(parsing: encoded)
        precondition(reparsed == value, "JSONEncoder changed the value:\n\(value)\n\(reparsed)")
    } catch {
        // Foundation's own limits (its nesting depth, numbers it cannot represent) are not Courier's.
    }
    // `description` is the compact sorted form.
    precondition(value.description == String(decoding: value.data(), as: UTF8.self))
    return 0
}
