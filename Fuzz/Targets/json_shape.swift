// Fuzz target: JSONShape validation (firstMismatch / matches) over parsed JSON.
//
// The input is JSON text. Properties: the exact shape of a value always matches it, as do `.any`
// and `.optional` of it; shapes derived from the value with choices taken from the input bytes
// (wrapping in optional, replacing by another type, dropping or adding members) give
// deterministic results where `matches` agrees with `firstMismatch`, and a mismatch names a path
// starting with `$`, a known type (or "missing") as found, and never the shape's own accepted type.
import Foundation
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let json = try? JSON(parsing: Data(bytes)) else { return 0 }
    let exact = exactShape(of: json)
    precondition(exact.firstMismatch(in: json) == nil, "the exact shape does not match: \(exact.firstMismatch(in: json)!)")
    precondition(JSONShape.any.matches(json) && JSONShape.optional(exact).matches(json))

    var choices = Choices(bytes: bytes)
    let shape = perturbedShape(of: json, choices: &choices)
    let mismatch = shape.firstMismatch(in: json)
    precondition(mismatch == shape.firstMismatch(in: json), "firstMismatch is not deterministic")
    precondition(shape.matches(json) == (mismatch == nil))
    if let mismatch {
        let types: Set<String> = ["string", "number", "bool", "null", "array", "object", "missing"]
        precondition(mismatch.path.hasPrefix("$"), "path \(mismatch.path)")
        precondition(types.contains(mismatch.found), "found \(mismatch.found)")
        precondition(!mismatch.description.isEmpty)
        precondition(JSONShape.optional(shape).matches(.null))
    }
    return 0
}

/// Cycles through the input bytes to make choices.
private struct Choices {
    let bytes: [UInt8]
    var position = 0
    mutating func next() -> UInt8 {
        guard !bytes.isEmpty else { return 0 }
        defer { position += 1 }
        return bytes[(position * 7 + 3) % bytes.count]
    }
}

private func exactShape(of json: JSON) -> JSONShape {
    switch json {
    case .null: .null
    case .bool: .bool
    case .number: .number
    case .string: .string
    case .array(let elements): .array(of: elements.first.map(exactShape) ?? .any)
        .replacingElementShape(if: elements.count > 1)
    case .object(let members): .object(members.mapValues(exactShape))
    }
}

extension JSONShape {
    /// Arrays with several elements may mix types, so their exact element shape is `.any`.
    fileprivate func replacingElementShape(if mixed: Bool) -> JSONShape { mixed ? .array(of: .any) : self }
}

private func perturbedShape(of json: JSON, choices: inout Choices, wraps: Int = 0) -> JSONShape {
    // At most a few optionals around one value, however the choices repeat.
    let choice = wraps >= 4 ? 9 : choices.next() % 10
    let simple: [JSONShape] = [.string, .number, .bool, .null]
    switch choice {
    case 0: return .any
    case 1: return .optional(perturbedShape(of: json, choices: &choices, wraps: wraps + 1))
    case 2: return simple[Int(choices.next() % 4)]
    case 3: return .array(of: .any)
    case 4: return .object(["missing\(choices.next() % 3)": simple[Int(choices.next() % 4)]])
    default: break
    }
    switch json {
    case .array(let elements):
        guard let first = elements.first else { return .array(of: .any) }
        return .array(of: perturbedShape(of: first, choices: &choices))
    case .object(let members):
        var shapes: [String: JSONShape] = [:]
        for key in members.keys.sorted() where choices.next() % 4 != 0 {
            shapes[key] = perturbedShape(of: members[key]!, choices: &choices)
        }
        return .object(shapes)
    default:
        return exactShape(of: json)
    }
}
