import Courier
import CourierHTTPTypes
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// CourierHTTPTypes: conversions between swift-http-types and Courier's types (#40).
@Suite struct HTTPTypesConversionTests {
    @Test func headersBecomeFieldsAndBackLosslessly() throws {
        let headers: HTTPHeaders = [
            HTTPHeader(name: "X-Trace", value: "1"), HTTPHeader(name: "set-cookie", value: "a=1"),
            HTTPHeader(name: "Accept", value: "text/plain"), HTTPHeader(name: "content-TYPE", value: "application/json"),
        ]
        let fields = try HTTPFields(headers)
        #expect(fields.map(\.name.rawName) == ["X-Trace", "set-cookie", "Accept", "content-TYPE"])
        #expect(fields[.contentType] == "application/json")
        #expect(Array(HTTPHeaders(fields)) == Array(headers))
        #expect(Array(HTTPHeaders(fields)).map(\.name) == ["X-Trace", "set-cookie", "Accept", "content-TYPE"])
    }

    @Test func repeatedFieldsStayLinesOfTheirOwnBothWays() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .accept, value: "text/html"))
        fields.append(HTTPField(name: .cacheControl, value: "no-cache"))
        fields.append(HTTPField(name: .accept, value: "application/json"))
        fields.append(HTTPField(name: .setCookie, value: "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT"))
        fields.append(HTTPField(name: .setCookie, value: "b=2"))
        let headers = HTTPHeaders(fields)
        #expect(
            Array(headers) == [
                HTTPHeader(name: "Accept", value: "text/html"), HTTPHeader(name: "Cache-Control", value: "no-cache"),
                HTTPHeader(name: "Accept", value: "application/json"),
                HTTPHeader(name: "Set-Cookie", value: "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT"), HTTPHeader(name: "Set-Cookie", value: "b=2"),
            ])
        #expect(headers.values(for: "accept") == ["text/html", "application/json"])
        #expect(try HTTPFields(headers) == fields)

        var appended: HTTPHeaders = ["X-Test": "a"]
        appended.append(name: "X-Test", value: "b")
        let converted = try HTTPFields(appended)
        #expect(converted.map(\.value) == ["a", "b"])
        #expect(HTTPHeaders(converted) == appended)
    }

    @Test func aHeaderThatIsNotValidHTTPIsRefusedNotRewritten() {
        #expect(throws: CourierError.self) { try HTTPFields(HTTPHeaders([HTTPHeader(name: "Bad Name", value: "x")])) }
        let error = #expect(throws: CourierError.self) { try HTTPFields(HTTPHeaders([HTTPHeader(name: "X", value: "a\r\nInjected: 1")])) }
        #expect(error?.kind == .invalidRequest)
    }

    @Test func methodsConvertBothWays() throws {
        for method: HTTPMethod in [.get, .post, .query, "PURGE"] {
            #expect(HTTPMethod(try HTTPRequest.Method(method)) == method)
        }
        #expect(throws: CourierError.self) { try HTTPRequest.Method(HTTPMethod(rawValue: "NOT A TOKEN")) }
    }

    @Test func aURLRequestBecomesAnHTTPRequest() throws {
        var urlRequest = URLRequest(url: try #require(URL(string: "https://api.example.com:8443/v2/users?page=2&q=a%20b")))
        urlRequest.httpMethod = "PATCH"
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let request = try HTTPRequest(urlRequest)
        #expect(request.method == .patch)
        #expect(request.scheme == "https")
        #expect(request.authority == "api.example.com:8443")
        #expect(request.path == "/v2/users?page=2&q=a%20b")
        #expect(request.headerFields[.contentType] == "application/json")
    }

    @Test(arguments: TransportUnderTest.available)
    func aResponseCourierReceivedBecomesAnHTTPResponse(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([MockResponse.text("made", status: 201).header("X-Id", "42")])
            let session = transport.session(server, monitors: [])
            let response = await session.request("things", method: .post).serializingString().response
            let head = try HTTPResponse(try #require(response.response))
            #expect(head.status == .created)
            #expect(head.headerFields[try #require(HTTPField.Name("X-Id"))] == "42")
            #expect(head.headerFields[.contentType]?.hasPrefix("text/plain") == true)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aResponsesFieldLinesConvertOneToOne(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([
                MockResponse.text("made").header("X-B", "1").header("Set-Cookie", "a=1; Path=/").header("X-A", "2")
                    .header("Set-Cookie", "b=2; Path=/").header("X-B", "3")
            ])
            let session = transport.session(server, monitors: [])
            let response = await session.request("things").serializingString().response
            let fields = try #require(response.headerFields)
            let head = try HTTPResponse(try #require(response.response), headerFields: fields)
            #expect(Array(HTTPHeaders(head.headerFields)) == Array(fields))
            let xB = try #require(HTTPField.Name("X-B"))
            switch transport {
            case .curl:
                // Wire order, every line apart.
                #expect(head.headerFields[values: .setCookie] == ["a=1; Path=/", "b=2; Path=/"])
                #expect(head.headerFields[values: xB] == ["1", "3"])
                let names = head.headerFields.map(\.name.rawName).filter { ["X-A", "X-B", "Set-Cookie"].contains($0) }
                #expect(names == ["X-B", "Set-Cookie", "X-A", "Set-Cookie", "X-B"])
            case .urlSession:
                // FoundationNetworking joins a name's lines and keeps no order.
                #expect(Set(head.headerFields[values: xB].flatMap { $0.components(separatedBy: ", ") }) == ["1", "3"])
            }
        }
    }
}
