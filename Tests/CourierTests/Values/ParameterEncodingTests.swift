import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

extension Values {
    /// Untyped `Parameters` with `URLEncoding` and `JSONEncoding` (#26).
    @Suite("Parameter encodings") struct ParameterEncodingTests {
        private let get = URLRequest(url: URL(string: "http://example.com/search?x=1")!)  // a literal URL
        private var post: URLRequest {
            var request = URLRequest(url: URL(string: "http://example.com/users")!)  // a literal URL
            request.httpMethod = "POST"
            return request
        }

        private func json(_ parameters: Parameters, _ encoding: JSONEncoding = .default) throws -> String {
            String(decoding: try encoding.encode(post, with: parameters).httpBody ?? Data(), as: UTF8.self)
        }

        @Test("JSON: nested values, exact integers, Booleans, NSNull, Foundation numbers")
        func jsonValues() throws {
            let parameters: Parameters = [
                "name": "bob", "age": 42, "big": Int64.max, "huge": UInt64.max, "ratio": 0.5, "admin": false,
                "manager": NSNull(), "tags": ["a", 1, true] as [any Sendable], "address": ["city": "Oslo", "zip": ["n": 1]] as Parameters,
                "nsTrue": NSNumber(value: true), "nsInt": NSNumber(value: 7), "nsDouble": NSNumber(value: 1.5),
                "optional": String?.none as any Sendable, "present": Optional("x") as any Sendable,
            ]
            let body = try json(parameters)
            #expect(
                body == #"{"address":{"city":"Oslo","zip":{"n":1}},"admin":false,"age":42,"big":9223372036854775807,"#
                    + #""huge":18446744073709551615,"manager":null,"name":"bob","nsDouble":1.5,"nsInt":7,"nsTrue":true,"#
                    + #""optional":null,"present":"x","ratio":0.5,"tags":["a",1,true]}"#)
            let request = try JSONEncoding.default.encode(post, with: ["a": 1])
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        }

        @Test("JSON from JSONSerialization keeps Booleans and numbers apart")
        func jsonFromFoundation() throws {
            let object = try JSONSerialization.jsonObject(with: Data(#"{"t":true,"n":1,"d":2.5,"s":"x","z":null}"#.utf8))
            guard let dictionary = object as? [String: Any] else { Issue.record("not a dictionary"); return }
            var parameters: Parameters = [:]
            // JSONSerialization's values are Foundation objects; copy them across as Sendable values.
            for (key, value) in dictionary {
                switch value {
                case let number as NSNumber: parameters[key] = number
                case let string as String: parameters[key] = string
                default: parameters[key] = NSNull()
                }
            }
            #expect(try json(parameters) == #"{"d":2.5,"n":1,"s":"x","t":true,"z":null}"#)
        }

        struct Point: Encodable, Sendable { let x: Int; let y: Int }
        final class NotEncodable: Sendable {}

        @Test("Encodable values, dates and data nest inside untyped parameters")
        func encodableInside() throws {
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            #expect(
                try json(["point": Point(x: 1, y: 2), "at": date, "blob": Data([1, 2])])
                    == #"{"at":"2023-11-14T22:13:20Z","blob":"AQI=","point":{"x":1,"y":2}}"#)
            let query = try URLEncoding.queryString.encode(get, with: ["point": Point(x: 1, y: 2), "at": date]).url?.query
            #expect(query == "x=1&at=1700000000&point%5Bx%5D=1&point%5By%5D=2")
        }

        @Test("a value that is neither JSON nor Encodable fails with encodingFailed, naming it")
        func notJSON() {
            for encoding in [JSONEncoding.default as any ParameterEncoding, URLEncoding.default] {
                do {
                    _ = try encoding.encode(post, with: ["user": ["tags": [1, NotEncodable()] as [any Sendable]]])
                    Issue.record("expected a failure")
                } catch let error as CourierError {
                    #expect(error.kind == .encodingFailed)
                    #expect(error.message.contains("user.tags[1]"))
                    #expect(error.message.contains("NotEncodable"))
                } catch {
                    Issue.record("unexpected \(error)")
                }
            }
            #expect(throws: CourierError.self) { try JSONEncoding.default.encode(post, with: ["x": Double.nan]) }
        }

        @Test("URL encoding: query for GET, form body for POST, with the form encoder's options")
        func urlEncoding() throws {
            let parameters: Parameters = ["q": "a b", "page": 2, "tags": ["x", "y"], "exact": true, "none": NSNull()]
            let query = try URLEncoding.default.encode(get, with: parameters).url?.query
            #expect(query == "x=1&exact=true&page=2&q=a%20b&tags%5B%5D=x&tags%5B%5D=y")
            let form = try URLEncoding.default.encode(post, with: parameters)
            #expect(form.httpBody.map { String(decoding: $0, as: UTF8.self) } == "exact=true&page=2&q=a%20b&tags%5B%5D=x&tags%5B%5D=y")
            #expect(form.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
            let custom = URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, boolEncoding: .numeric)
            #expect(try custom.encode(post, with: parameters).url?.query == "exact=1&page=2&q=a%20b&tags=x&tags=y")
            let options = URLEncoding(destination: .httpBody, encoder: URLEncodedFormEncoder(nilEncoding: .null, spaceEncoding: .plusReplaced))
            #expect(try options.encode(get, with: ["q": "a b", "none": NSNull()]).httpBody == Data("none=null&q=a+b".utf8))
            #expect(try URLEncoding.default.encode(get, with: nil).url == get.url)
        }
    }
}
