import Testing
import Foundation
@_spi(Transport) @testable import Courier

extension Values {
    /// `URLEncodedFormEncoder`'s Alamofire options (#26).
    @Suite("Form encoder options") struct FormEncoderOptionTests {
        struct Query: Encodable {
            let pageSize: Int
            let imageURLString: String
            let isDraft: Bool
            let nested: Nested?
            struct Nested: Encodable { let innerKey: String; let list: [Int?] }
        }

        private let query = Query(
            pageSize: 10, imageURLString: "a b+c", isDraft: true,
            nested: .init(innerKey: "v", list: [1, nil, 3]))

        private func pairs<T: Encodable>(_ value: T, _ encoder: URLEncodedFormEncoder) throws -> [String] {
            try encoder.encode(value).map { "\($0.name)=\($0.value)" }
        }

        @Test(
            "key encodings",
            arguments: [
                (URLEncodedFormEncoder.KeyEncoding.useDefaultKeys, ["imageURLString", "isDraft", "nested", "innerKey", "pageSize"]),
                (.convertToSnakeCase, ["image_url_string", "is_draft", "nested", "inner_key", "page_size"]),
                (.convertToKebabCase, ["image-url-string", "is-draft", "nested", "inner-key", "page-size"]),
                (.capitalized, ["ImageURLString", "IsDraft", "Nested", "InnerKey", "PageSize"]),
                (.uppercased, ["IMAGEURLSTRING", "ISDRAFT", "NESTED", "INNERKEY", "PAGESIZE"]),
                (.lowercased, ["imageurlstring", "isdraft", "nested", "innerkey", "pagesize"]),
            ])
        func keyEncodings(encoding: URLEncodedFormEncoder.KeyEncoding, names: [String]) throws {
            let encoded = try pairs(query, URLEncodedFormEncoder(keyOrdering: .encodingOrder, keyEncoding: encoding))
            #expect(encoded.first == "\(names[4])=10")
            #expect(encoded.contains("\(names[0])=a b+c"))
            #expect(encoded.contains("\(names[1])=true"))
            #expect(encoded.contains("\(names[2])[\(names[3])]=v"))
        }

        @Test("custom key encoding, and snake case of edge cases")
        func customKeys() throws {
            let encoder = URLEncodedFormEncoder(keyEncoding: .custom { "x_" + $0 })
            #expect(try pairs(["a": 1], encoder) == ["x_a=1"])
            let snake = URLEncodedFormEncoder.KeyEncoding.convertToSnakeCase
            #expect(snake.encode("already_snake") == "already_snake")
            #expect(snake.encode("URL") == "url")
            #expect(snake.encode("userID2Name") == "user_id2_name")
            #expect(snake.encode("") == "")
        }

        @Test("keys are sorted by their encoded names; alphabetizeKeyValuePairs is keyOrdering")
        func sortingUsesEncodedNames() throws {
            var encoder = URLEncodedFormEncoder(keyEncoding: .custom { $0 == "b" ? "0b" : $0 })
            #expect(try pairs(["a": 1, "b": 2], encoder) == ["0b=2", "a=1"])
            #expect(encoder.alphabetizeKeyValuePairs)
            encoder.alphabetizeKeyValuePairs = false
            #expect(encoder.keyOrdering == .encodingOrder)
        }

        @Test("key path, nil and array encodings together")
        func keyPathAndNil() throws {
            let dots = URLEncodedFormEncoder(keyPathEncoding: .dots)
            #expect(try pairs(["a": ["b": ["c": 1]]], dots) == ["a.b.c=1"])
            let dropValue = URLEncodedFormEncoder(arrayEncoding: .indexInBrackets, nilEncoding: .dropValue)
            #expect(try pairs(query.nested, dropValue) == ["innerKey=v", "list[0]=1", "list[1]=", "list[2]=3"])
            let null = URLEncodedFormEncoder(nilEncoding: .null)
            let values: [String: Int?] = ["a": 1, "b": nil]
            #expect(try pairs(values, null) == ["a=1", "b=null"])
            // Synthesized Encodable leaves a nil property out (encodeIfPresent), whatever the nil encoding.
            #expect(
                try pairs(Query(pageSize: 1, imageURLString: "", isDraft: false, nested: nil), null)
                    == ["imageURLString=", "isDraft=false", "pageSize=1"])
            #expect(try pairs(query.nested, URLEncodedFormEncoder()) == ["innerKey=v", "list[]=1", "list[]=3"])
        }

        @Test("space encoding applies to queries and bodies; a literal + stays escaped")
        func spaces() throws {
            let plus = URLEncodedFormEncoder(spaceEncoding: .plusReplaced)
            #expect(try plus.encodeQuery(["q": "a b+c %20"]) == "q=a+b%2Bc+%2520")
            #expect(try plus.encodeFormBody(["q": "a b"]) == Data("q=a+b".utf8))
            #expect(try URLEncodedFormEncoder().encodeQuery(["q": "a b"]) == "q=a%20b")
        }

        @Test("bool and date encodings")
        func boolsAndDates() throws {
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            #expect(try pairs(["d": date], URLEncodedFormEncoder(dateEncoding: .iso8601)) == ["d=2023-11-14T22:13:20Z"])
            #expect(try pairs(["d": date], URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970)) == ["d=1700000000000"])
            #expect(try pairs(["b": true], URLEncodedFormEncoder(boolEncoding: .numeric)) == ["b=1"])
        }
    }
}
