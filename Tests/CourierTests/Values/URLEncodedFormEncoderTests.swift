import CourierSupport
import Foundation
import Testing
@_spi(Transport) @testable import Courier

extension Values {
    @Suite("Percent encoding") struct PercentEncodingTests {
        @Test(
            "query components escape exactly the reserved set",
            arguments: [
                ("abcXYZ019-._~", "abcXYZ019-._~"),
                ("a/b?c", "a/b?c"),
                ("&", "%26"), ("=", "%3D"), ("+", "%2B"), ("#", "%23"), ("[", "%5B"), ("]", "%5D"),
                (" ", "%20"), ("%", "%25"), ("%20", "%2520"),
                (":@!$'()*,;", "%3A%40%21%24%27%28%29%2A%2C%3B"),
                ("\"<>\\^`{|}", "%22%3C%3E%5C%5E%60%7B%7C%7D"),
                ("\n\t\u{7F}", "%0A%09%7F"),
                ("é", "%C3%A9"),
                ("😀", "%F0%9F%98%80"),
                ("👍🏽", "%F0%9F%91%8D%F0%9F%8F%BD"),
                ("日本語", "%E6%97%A5%E6%9C%AC%E8%AA%9E"),
                ("한국어", "%ED%95%9C%EA%B5%AD%EC%96%B4"),
                ("a b&c=d+e", "a%20b%26c%3Dd%2Be"),
                ("", ""),
            ])
        func escapes(raw: String, escaped: String) {
            #expect(PercentEncoding.escapeQueryComponent(raw) == escaped)
            #expect(PercentEncoding.escapeFormComponent(raw) == escaped)
        }

        @Test("escaping is reversible by Foundation's percent decoding", arguments: ["a b&c=d", "😀 日本/?#[]", "100%"])
        func reversible(raw: String) {
            #expect(PercentEncoding.escapeQueryComponent(raw).removingPercentEncoding == raw)
        }
    }

    @Suite("URLEncodedFormEncoder") struct URLEncodedFormEncoderTests {
        struct Profile: Encodable {
            let name: String
            let age: Int
            let nickname: String?
        }

        struct Item: Encodable { let id: Int; let label: String }
        struct Order: Encodable { let items: [Item]; let note: String }
        struct Empty: Encodable {}

        private func pairs<T: Encodable>(_ value: T, _ encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws -> [String] {
            try encoder.encode(value).map { "\($0.name)=\($0.value)" }
        }

        @Test("keys are sorted by default; encoding order is an option")
        func keyOrder() throws {
            let profile = Profile(name: "bob", age: 42, nickname: "b")
            #expect(try pairs(profile) == ["age=42", "name=bob", "nickname=b"])
            #expect(try pairs(profile, URLEncodedFormEncoder(keyOrdering: .encodingOrder)) == ["name=bob", "age=42", "nickname=b"])
            #expect(try pairs(["z": 1, "a": 2, "m": 3]) == ["a=2", "m=3", "z=1"])
        }

        @Test("nil values drop their key")
        func nilDropped() throws {
            #expect(try pairs(Profile(name: "bob", age: 1, nickname: nil)) == ["age=1", "name=bob"])
            let dictionary: [String: Int?] = ["a": 1, "b": nil]
            #expect(try pairs(dictionary) == ["a=1"])
            #expect(try pairs(["list": [1, nil, 3] as [Int?]]) == ["list[]=1", "list[]=3"])
            #expect(
                try pairs(["list": [1, nil, 3] as [Int?]], URLEncodedFormEncoder(arrayEncoding: .indexInBrackets))
                    == ["list[0]=1", "list[2]=3"])
        }

        @Test("nested objects use brackets")
        func nested() throws {
            let value = ["a": ["b": ["c": "d"], "a": ["z": "y"]]]
            #expect(try pairs(value) == ["a[a][z]=y", "a[b][c]=d"])
        }

        @Test(
            "array encodings",
            arguments: [
                (URLEncodedFormEncoder.ArrayEncoding.brackets, ["key[]=1", "key[]=2"]),
                (.noBrackets, ["key=1", "key=2"]),
                (.indexInBrackets, ["key[0]=1", "key[1]=2"]),
            ])
        func arrays(encoding: URLEncodedFormEncoder.ArrayEncoding, expected: [String]) throws {
            #expect(try pairs(["key": [1, 2]], URLEncodedFormEncoder(arrayEncoding: encoding)) == expected)
        }

        @Test("arrays of objects and of arrays")
        func arraysOfContainers() throws {
            let order = Order(items: [Item(id: 1, label: "x"), Item(id: 2, label: "y")], note: "n")
            #expect(try pairs(order) == ["items[][id]=1", "items[][label]=x", "items[][id]=2", "items[][label]=y", "note=n"])
            #expect(
                try pairs(order, URLEncodedFormEncoder(arrayEncoding: .indexInBrackets))
                    == ["items[0][id]=1", "items[0][label]=x", "items[1][id]=2", "items[1][label]=y", "note=n"])
            #expect(try pairs(["m": [[1, 2], [3]]]) == ["m[][]=1", "m[][]=2", "m[][]=3"])
            #expect(
                try pairs(["m": [[1, 2], [3]]], URLEncodedFormEncoder(arrayEncoding: .indexInBrackets))
                    == ["m[0][0]=1", "m[0][1]=2", "m[1][0]=3"])
        }

        @Test("empty arrays and objects produce nothing")
        func emptyContainers() throws {
            #expect(try pairs(["a": [Int](), "b": [1]]) == ["b[]=1"])
            #expect(try pairs(["a": [String: Int]()]) == [])
        }

        @Test("Booleans are literal by default and numeric on request")
        func bools() throws {
            #expect(try pairs(["t": true, "f": false]) == ["f=false", "t=true"])
            #expect(try pairs(["t": true, "f": false], URLEncodedFormEncoder(boolEncoding: .numeric)) == ["f=0", "t=1"])
        }

        @Test(
            "dates",
            arguments: [
                (URLEncodedFormEncoder.DateEncoding.secondsSince1970, 1_700_000_000, "1700000000"),
                (.secondsSince1970, 1_700_000_000.5, "1700000000.5"),
                (.millisecondsSince1970, 1_700_000_000.25, "1700000000250"),
                (.iso8601, 1_700_000_000, "2023-11-14T22:13:20Z"),
                (.formatted(Self.dayFormatter), 1_700_000_000, "2023-11-14"),
                (.custom { "day \(Int($0.timeIntervalSince1970) / 86_400)" }, 1_700_000_000, "day 19675"),
            ] as [(URLEncodedFormEncoder.DateEncoding, TimeInterval, String)])
        func dates(encoding: URLEncodedFormEncoder.DateEncoding, interval: TimeInterval, expected: String) throws {
            let encoder = URLEncodedFormEncoder(dateEncoding: encoding)
            #expect(try pairs(["d": Date(timeIntervalSince1970: interval)], encoder) == ["d=\(expected)"])
        }

        static let dayFormatter: DateFormatter = {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd"
            return formatter
        }()

        @Test("a throwing date closure fails as encodingFailed with the cause underneath")
        func throwingDate() throws {
            struct Refused: Error {}
            let encoder = URLEncodedFormEncoder(dateEncoding: .custom { _ in throw Refused() })
            let error = try #require(throws: CourierError.self) { try encoder.encode(["d": Date()]) }
            #expect(error.kind == .encodingFailed)
            #expect(error.underlyingError is Refused)
        }

        @Test("scalars: numbers without needless fractions, Data as Base64, URLs and Decimals as text")
        func scalars() throws {
            struct Scalars: Encodable {
                let double = 2.0, fraction = 2.5, float: Float = 0.1, big = Int64.max, small: UInt8 = 7, negative = -3
                let data = Data("hello".utf8)
                let url = URL(string: "https://example.com/a?b=c")
                let decimal = Decimal(string: "1.25")
            }
            #expect(
                try pairs(Scalars()) == [
                    "big=9223372036854775807", "data=aGVsbG8=", "decimal=1.25", "double=2", "float=0.1", "fraction=2.5",
                    "negative=-3", "small=7", "url=https://example.com/a?b=c",
                ])
        }

        @Test("a root array or bare value throws encodingFailed naming the type")
        func rootMustBeKeyed() throws {
            let array = try #require(throws: CourierError.self) { try URLEncodedFormEncoder().encode([1, 2]) }
            #expect(array.kind == .encodingFailed)
            #expect(array.message.contains("Array<Int>"))
            #expect(array.message.contains("an array"))
            let string = try #require(throws: CourierError.self) { try URLEncodedFormEncoder().encode("swift") }
            #expect(string.message.contains("type String"))
            let number = try #require(throws: CourierError.self) { try URLEncodedFormEncoder().encodeQuery(42) }
            #expect(number.message.contains("type Int"))
        }

        @Test("an empty Encodable yields no pairs and an empty query")
        func empty() throws {
            #expect(try URLEncodedFormEncoder().encode(Empty()).isEmpty)
            #expect(try URLEncodedFormEncoder().encodeQuery(Empty()) == "")
            #expect(try URLEncodedFormEncoder().encode([String: String]()).isEmpty)
            #expect(try URLEncodedFormEncoder().encode(Profile?.none).isEmpty)
        }

        @Test("queries escape names and values, including emoji and CJK")
        func query() throws {
            let query = try URLEncodedFormEncoder().encodeQuery([
                "q": "swift & co", "emoji": "😀", "path": "a/b?c", "名前": "太郎", "plus": "1+1=2", "list": "a,b",
            ])
            #expect(query == "emoji=%F0%9F%98%80&list=a%2Cb&path=a/b?c&plus=1%2B1%3D2&q=swift%20%26%20co&%E5%90%8D%E5%89%8D=%E5%A4%AA%E9%83%8E")
            #expect(try URLEncodedFormEncoder().encodeQuery(["a": ["b": [1]]]) == "a%5Bb%5D%5B%5D=1")
        }

        @Test("a form body holds the same bytes as the query")
        func formBody() throws {
            let value = ["name": "Zoë Ångström", "tags": "x y"]
            let body = try URLEncodedFormEncoder().encodeFormBody(value)
            #expect(String(decoding: body, as: UTF8.self) == "name=Zo%C3%AB%20%C3%85ngstr%C3%B6m&tags=x%20y")
            #expect(body == Data(try URLEncodedFormEncoder().encodeQuery(value).utf8))
        }

        @Test("super encoders and nested containers work like other encoders")
        func superEncoder() throws {
            class Base: Encodable {
                var base = 1
            }
            final class Derived: Base {
                var own = 2
                enum CodingKeys: String, CodingKey { case own, extra }
                override func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(own, forKey: .own)
                    var extra = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .extra)
                    try extra.encode("x", forKey: .own)
                    var list = container.nestedUnkeyedContainer(forKey: .extra)
                    try list.encode(9)
                    try super.encode(to: container.superEncoder())
                }
            }
            // The unkeyed container replaces the keyed one for "extra": the last shape written wins.
            #expect(try pairs(Derived()) == ["extra[]=9", "own=2", "super[base]=1"])
        }

        @Test("a key encoded twice keeps the last value")
        func duplicateKey() throws {
            struct Twice: Encodable {
                enum CodingKeys: String, CodingKey { case a }
                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(1, forKey: .a)
                    try container.encode(2, forKey: .a)
                }
            }
            #expect(try pairs(Twice()) == ["a=2"])
        }

        @Test("errors thrown by a value's encode(to:) become encodingFailed")
        func userError() throws {
            struct Broken: Encodable {
                struct Nope: Error {}
                func encode(to encoder: any Encoder) throws { throw Nope() }
            }
            let error = try #require(throws: CourierError.self) { try URLEncodedFormEncoder().encode(["x": Broken()]) }
            #expect(error.kind == .encodingFailed)
            #expect(error.message.contains("Dictionary<String, Broken>"))
            #expect(error.underlyingError is Broken.Nope)
        }
    }
}
