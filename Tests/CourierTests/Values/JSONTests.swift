import Foundation
import Testing
import CourierTestSupport
@_spi(Transport) @testable import Courier

extension Values {
    @Suite("JSON parsing") struct JSONParsingTests {
        @Test(
            "valid documents parse to the expected value",
            arguments: [
                (#"{"a":1}"#, JSON.object(["a": 1])),
                (#"[1, 2.5, -3e2, 0, 1E+2, 1e-2, 0.000123]"#, JSON.array([1, 2.5, -300, 0, 100, 0.01, 0.000123])),
                (#""\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r""#, JSON.string("é😀\n\t\"\\/\u{8}\u{C}\r")),
                (#""\u0000x""#, JSON.string("\u{0}x")),
                ("true", JSON.bool(true)),
                ("false", JSON.bool(false)),
                ("null", JSON.null),
                (" \t\r\n[ ] \n", JSON.array([])),
                ("{ }", JSON.object([:])),
                ("\"日本語 ünï 😀\"", JSON.string("日本語 ünï 😀")),
                (#"{"a":1,"a":2}"#, JSON.object(["a": 2])),
                (#"{"x":{"y":[null,{"z":false}]}}"#, JSON.object(["x": ["y": [nil, ["z": false]]]])),
                ("12345678901234567890", JSON.number(12_345_678_901_234_567_168)),
                ("123456789012345678", JSON.number(123_456_789_012_345_680)),
                ("0.1", JSON.number(0.1)),
                ("-0.5", JSON.number(-0.5)),
                ("1.7976931348623157e308", JSON.number(.greatestFiniteMagnitude)),
                ("5e-324", JSON.number(.leastNonzeroMagnitude)),
                ("2.2250738585072014e-308", JSON.number(2.2250738585072014e-308)),
                ("3.141592653589793238462643383279", JSON.number(3.141592653589793)),
                ("1e-99999", JSON.number(0)),
            ])
        func parsesValid(text: String, expected: JSON) throws {
            #expect(try JSON(parsing: Data(text.utf8)) == expected)
        }

        @Test("negative zero keeps its sign")
        func negativeZero() throws {
            let value = try #require(try JSON(parsing: "-0").doubleValue)
            #expect(value == 0 && value.sign == .minus)
        }

        @Test("a UTF-8 byte-order mark is skipped")
        func skipsBOM() throws {
            #expect(try JSON(parsing: Data([0xEF, 0xBB, 0xBF]) + Data(#"{"a":[1]}"#.utf8)) == ["a": [1]])
        }

        @Test(
            "invalid documents fail with the reason and byte offset",
            arguments: [
                ("", "empty", 0),
                ("   ", "unexpected end of input", 3),
                ("01", "leading zeros", 0),
                ("-01", "leading zeros", 0),
                ("-", "digit after '-'", 1),
                ("1.", "after the decimal point", 2),
                (".5", "unexpected '.'", 0),
                ("+1", "unexpected '+'", 0),
                ("1e", "exponent", 2),
                ("1e+", "exponent", 3),
                ("NaN", "unexpected 'N'", 0),
                ("Infinity", "unexpected 'I'", 0),
                ("-Infinity", "digit after '-'", 1),
                ("[1,]", "unexpected ']'", 3),
                (#"{"a":1,}"#, "expected a string key", 7),
                (#"{"a" 1}"#, "expected ':' after the object key \"a\"", 5),
                (#"{1:2}"#, "expected a string key", 1),
                ("[1 2]", "expected ',' or ']'", 3),
                (#"{"a":1 "b":2}"#, "expected ',' or '}'", 7),
                ("[1", "inside an array", 2),
                (#"{"a":1"#, "inside an object", 6),
                (#""abc"#, "unterminated string", 0),
                (#""\x""#, "invalid escape sequence '\\x'", 1),
                (#""\ud800""#, "unpaired high surrogate \\uD800", 1),
                (#""\udc00""#, "unpaired low surrogate \\uDC00", 1),
                (#""\ud800\u0041""#, "not a low surrogate", 1),
                (#""\u12xy""#, "'x' is not a hexadecimal digit", 1),
                (#""\u12""#, "incomplete \\u escape", 1),
                (#""\u12"#, "incomplete \\u escape", 1),
                ("\"a\nb\"", "unescaped control character byte 0x0A", 2),
                ("{} x", "after the end of the JSON value", 3),
                ("[] []", "after the end of the JSON value", 3),
                ("tru", "expected 'true'", 0),
                ("nul", "expected 'null'", 0),
                ("fals e", "expected 'false'", 0),
                ("1e400", "out of range", 0),
                ("-1e400", "out of range", 0),
                ("'a'", "unexpected '''", 0),
            ])
        func rejectsInvalid(text: String, reason: String, offset: Int) throws {
            let error = try #require(throws: CourierError.self) { try JSON(parsing: Data(text.utf8)) }
            #expect(error.kind == .serializationFailed)
            let parseError = try #require(error.underlyingError as? JSON.ParseError)
            #expect(parseError.reason.contains(reason), "\(parseError.reason)")
            #expect(parseError.offset == offset)
            #expect(error.message.contains("byte offset \(offset)"))
        }

        @Test(
            "invalid UTF-8 inside strings is rejected at the offending byte",
            arguments: [
                ([0x22, 0xFF, 0x22], "cannot start a character", 1),
                ([0x22, 0xC0, 0x80, 0x22], "cannot start a character", 1),  // overlong NUL
                ([0x22, 0xE0, 0x80, 0x80, 0x22], "cannot follow", 2),  // overlong 3-byte
                ([0x22, 0xED, 0xA0, 0x80, 0x22], "cannot follow", 2),  // encoded surrogate
                ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "cannot follow", 2),  // above U+10FFFF
                ([0x22, 0xE6, 0x97, 0x41, 0x22], "not a continuation byte", 3),
                ([0x22, 0xE6, 0x97], "truncated sequence", 1),
                ([0x5B, 0xC3, 0xA9, 0x5D], "unexpected byte 0xC3", 1),  // non-ASCII outside a string
                ([0xFF, 0xFE, 0x5B, 0x00], "UTF-16 or UTF-32 byte-order mark", 0),
            ] as [([UInt8], String, Int)])
        func rejectsInvalidUTF8(bytes: [UInt8], reason: String, offset: Int) throws {
            let error = try #require(throws: CourierError.self) { try JSON(parsing: Data(bytes)) }
            let parseError = try #require(error.underlyingError as? JSON.ParseError)
            #expect(parseError.reason.contains(reason), "\(parseError.reason)")
            #expect(parseError.offset == offset)
        }

        @Test("errors report line and column")
        func lineAndColumn() throws {
            let text = "{\n  \"a\": 1,\n  \"b\": x\n}"
            let error = try #require(throws: CourierError.self) { try JSON(parsing: text) }
            let parseError = try #require(error.underlyingError as? JSON.ParseError)
            #expect(parseError.line == 3)
            #expect(parseError.column == 8)
            #expect(parseError.offset == 19)
            #expect(error.message == "Invalid JSON at line 3, column 8 (byte offset 19): unexpected 'x'; expected a value")
        }

        @Test("columns count characters, not bytes")
        func columnCountsScalars() throws {
            let error = try #require(throws: CourierError.self) { try JSON(parsing: #"["é😀", x]"#) }
            let parseError = try #require(error.underlyingError as? JSON.ParseError)
            #expect(parseError.column == 8)
            #expect(parseError.offset == 11)
        }

        @Test("nesting up to 512 levels parses; 513 fails")
        func depthLimit() throws {
            let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
            var value = try JSON(parsing: deepest)
            var depth = 0
            while let inner = value[0] { value = inner; depth += 1 }
            #expect(depth == 511)

            let tooDeep = String(repeating: "{\"a\":", count: 256) + String(repeating: "[", count: 257)
            let error = try #require(throws: CourierError.self) { try JSON(parsing: tooDeep) }
            #expect(error.message.contains("deeper than 512 levels"))
        }
    }

    @Suite("JSON values") struct JSONValueTests {
        static let sample: JSON = [
            "nick": "bob", "level": 3, "ratio": 0.5, "admin": false, "bio": nil,
            "tags": ["a", "b"], "profile": ["age": 42],
        ]

        @Test("typed accessors return values of the right type and nil otherwise")
        func accessors() {
            let json = Self.sample
            #expect(json["nick"]?.stringValue == "bob")
            #expect(json["level"]?.intValue == 3)
            #expect(json["level"]?.doubleValue == 3)
            #expect(json["ratio"]?.intValue == nil)
            #expect(json["admin"]?.boolValue == false)
            #expect(json["bio"]?.isNull == true)
            #expect(json["nick"]?.isNull == false)
            #expect(json["tags"]?.arrayValue == ["a", "b"])
            #expect(json["profile"]?.objectValue == ["age": 42])
            #expect(json["profile"]?["age"]?.intValue == 42)
            #expect(json["tags"]?[1]?.stringValue == "b")
            #expect(json["nick"]?.intValue == nil)
            #expect(json["level"]?.stringValue == nil)
        }

        @Test(
            "subscripts never trap",
            arguments: [
                (JSON.array([1, 2]), 2), (JSON.array([1, 2]), -1), (JSON.array([]), 0), (JSON.object(["0": 1]), 0), (JSON.string("ab"), 0),
            ])
        func subscriptsAreSafe(json: JSON, index: Int) {
            #expect(json[index] == nil)
            #expect(json["missing"] == nil)
        }

        @Test(
            "intValue accepts only exact integers",
            arguments: [
                (3.0, 3 as Int?), (-7.0, -7), (3.5, nil), (1e300, nil), (.nan, nil), (.infinity, nil),
                (9_007_199_254_740_992.0, 9_007_199_254_740_992),
            ] as [(Double, Int?)])
        func exactIntegers(number: Double, expected: Int?) {
            #expect(JSON.number(number).intValue == expected)
        }

        @Test("literals build the same values as the cases")
        func literals() {
            let literal: JSON = ["a": [1, 2.5, "x", true, nil], "b": [:]]
            let explicit = JSON.object(["a": .array([.number(1), .number(2.5), .string("x"), .bool(true), .null]), "b": .object([:])])
            #expect(literal == explicit)
        }

        @Test("compact output sorts keys and writes integers without a fraction")
        func compactDescription() {
            let json: JSON = ["b": 1, "a": [true, nil, "x", 2.5, -0.0, 1e21, 0.1, 1e-7]]
            #expect(json.description == #"{"a":[true,null,"x",2.5,-0,1e+21,0.1,1e-07],"b":1}"#)
            #expect(String(decoding: json.data(), as: UTF8.self) == json.description)
        }

        @Test(
            "strings are escaped",
            arguments: [
                ("a\"b", #""a\"b""#), ("back\\slash", #""back\\slash""#), ("line\nbreak\r\t", #""line\nbreak\r\t""#),
                ("\u{1}\u{1F}\u{8}\u{C}", #""\u0001\u001f\b\f""#), ("é/😀", "\"é/😀\""),
            ])
        func escapesStrings(string: String, expected: String) {
            #expect(JSON.string(string).description == expected)
        }

        @Test("non-finite numbers are written as null")
        func nonFinite() {
            #expect(JSON.array([.number(.nan), .number(.infinity)]).description == "[null,null]")
        }

        @Test("pretty printing indents by two spaces")
        func prettyPrinted() {
            let json: JSON = ["c": [], "a": [1, ["x": nil]], "b": [:]]
            let expected = """
                {
                  "a": [
                    1,
                    {
                      "x": null
                    }
                  ],
                  "b": {},
                  "c": []
                }
                """
            #expect(String(decoding: json.data(prettyPrinted: true), as: UTF8.self) == expected)
        }

        @Test("output parses back to the same value, sorted or not", arguments: [true, false])
        func roundTrips(sortedKeys: Bool) throws {
            let json: JSON = ["k\(sortedKeys)": [1, -2.75, "é\"\\\n", ["deep": [nil, true]]], "z": 1e-300, "y": 123456789012]
            #expect(try JSON(parsing: json.data(sortedKeys: sortedKeys)) == json)
            #expect(try JSON(parsing: json.data(prettyPrinted: true, sortedKeys: sortedKeys)) == json)
        }

        @Test("Codable works through Foundation's JSON coders")
        func codable() throws {
            struct Envelope: Codable, Equatable { let id: Int; let payload: JSON }
            let envelope = Envelope(id: 7, payload: Self.sample)
            let encoded = try JSONEncoder().encode(envelope)
            #expect(try JSONDecoder().decode(Envelope.self, from: encoded) == envelope)
            #expect(try JSON(parsing: encoded)["payload"] == Self.sample)
            let text = Data(#"[1,"two",{"three":[true,null]}]"#.utf8)
            #expect(try JSONDecoder().decode(JSON.self, from: text) == JSON(parsing: text))
        }

        @Test("decode(_:) decodes a Decodable type, and fails as serializationFailed naming it")
        func decode() throws {
            struct User: Decodable, Equatable { let nick: String; let level: Int }
            #expect(try Self.sample.decode(User.self) == User(nick: "bob", level: 3))
            let error = try #require(throws: CourierError.self) { try (["nick": 1] as JSON).decode(User.self) }
            #expect(error.kind == .serializationFailed)
            #expect(error.message.contains("User"))
            #expect(error.underlyingError is DecodingError)
        }

        @Test("prints parse speed against JSONSerialization for a 64 KiB document")
        func parseSpeed() throws {
            let data = Self.document(approximateSize: 64 * 1024)
            #expect(data.count >= 64 * 1024)
            #expect(try JSON(parsing: data)["items"]?.arrayValue?.isEmpty == false)
            let iterations = 30
            let clock = ContinuousClock()
            var sink = 0
            let courier = try clock.measure {
                for _ in 0..<iterations { sink &+= try JSON(parsing: data).objectValue?.count ?? 0 }
            }
            let foundation = try clock.measure {
                for _ in 0..<iterations { sink &+= (try JSONSerialization.jsonObject(with: data) as? NSDictionary)?.count ?? 0 }
            }
            let perParse = { (duration: Duration) in duration / iterations }
            TestEnvironment.note(
                "JSON parse of \(data.count) bytes: Courier \(perParse(courier)), JSONSerialization \(perParse(foundation)) per document (\(sink))")
        }

        /// A deterministic document mixing strings, escapes, numbers and nesting.
        static func document(approximateSize: Int) -> Data {
            var items: [JSON] = []
            var index = 0
            while JSON.object(["items": .array(items)]).data().count < approximateSize {
                items.append([
                    "id": .number(Double(index)), "name": .string("user \(index) \"quoted\" é"), "score": .number(Double(index) * 1.25),
                    "active": .bool(index.isMultiple(of: 2)), "tags": ["alpha", "beta", .string("t\(index % 7)")],
                    "address": ["city": "Zürich", "zip": .string(String(8000 + index)), "geo": [47.37, 8.54]], "note": nil,
                ])
                index += 1
            }
            return JSON.object(["items": .array(items)]).data()
        }
    }
}
