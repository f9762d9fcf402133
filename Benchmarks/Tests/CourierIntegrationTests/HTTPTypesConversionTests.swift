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

    @Test func repeatedFieldsAreJoinedInOrderNotDropped() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .accept, value: "text/html"))
        fields.append(HTTPField(name: .cacheControl, value: "no-cache"))
        fields.append(HTTPField(name: .accept, value: "application/json"))
        let headers = HTTPHeaders(fields)
        #expect(
            Array(headers) == [
                HTTPHeader(name: "Accept", value: "text/html, application/json"), HTTPHeader(name: "Cache-Control", value: "no-cache"),
            ])
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
}
