import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTestServer
import CourierTestSupport

// The `///` examples of the Alamofire-parity APIs of #26 (credentials, untyped parameters,
// transforms, form encoder options, serializer factories and preprocessing, stream uploads,
// structured validation errors, request compression), as written in the docs, against
// `import Courier` only, run against a CourierTestServer.

private struct User: Codable, Sendable, Equatable { let nick: String; let level: Int }
private struct Config: Decodable, Sendable { let mode: String }
private struct Entry: Encodable, Sendable { let line: String }
private enum AppError: Error { case network(CourierError), notFound }

@Suite struct ParityExamplesB {
    /// A server that answers what the examples ask for.
    private static func server() throws -> TestServer {
        let server = try TestServer()
        server.dispatcher = { request in
            switch request.path {
            case "/users/42", "/me": return .json(#"{"nick":"bob","level":3}"#)
            case "/users": return request.method == "POST" ? .status(201) : .json(#"[{"nick":"bob","level":3}]"#)
            case "/count": return .text("1,234")
            case "/config": return .json(")]}',\n{\"mode\":\"fast\"}")
            case "/reports/1":
                let expected = "Basic " + Data("bob:secret".utf8).base64EncodedString()
                return request.headers["Authorization"] == expected
                    ? .text("report")
                    : MockResponse(status: 401, headers: ["WWW-Authenticate": #"Basic realm="reports""#])
            default: return .echo(request)
            }
        }
        return server
    }

    @Test func examplesCompileAndRun() async throws {
        let server = try Self.server()
        defer { expectClean(server.shutdown()) }
        let apiURL = server.baseURL
        let api = Session(baseURL: apiURL, callbackQueue: DispatchQueue(label: "examples"))

        // CourierError.validationFailure
        let response = await api.request("missing").validate(statusCode: [200]).serializingData().response
        switch response.error?.validationFailure {
        case .unacceptableStatusCode(let code)?: #expect(code == 200 || code > 0)
        case .unacceptableContentType(let acceptable, let actual)?: print(actual, "is not one of", acceptable)
        case .missingContentType(let acceptable)?: print("no Content-Type; wanted", acceptable)
        default: break
        }
        if let error = response.error, case .unacceptableStatusCode(let code)? = error.validationFailure, code == 404 { print("not found") }
        _ = CourierError(validationFailure: .unacceptableStatusCode(418), "No tea.", responseCode: 418)

        // DataResponse transforms
        let countResponse = await api.request("count").serializingString().response
        let count = countResponse.tryMap { text in try Int(text, format: .number) }  // DataResponse<Int, CourierError>
        #expect(count.value == 1234)
        let userResponse = await api.request("users/42").validate().serializingDecodable(User.self).response
        let mine = userResponse.mapError { AppError.network($0) }  // DataResponse<User, AppError>
        #expect(mine.value?.nick == "bob")
        let dataResponse = await api.request("users/42").validate().serializingData().response
        let checked = dataResponse.tryMapError { error -> AppError in  // DataResponse<Data, any Error>
            if error.isCancelled { throw error }
            return AppError.network(error)
        }
        #expect(checked.value != nil)

        // DownloadResponse transforms
        let downloadResponse = await api.download("report.csv", to: .temporary).serializingDownloadedFileURL().response
        let name = downloadResponse.map(\.lastPathComponent)  // DownloadResponse<String, CourierError>
        #expect(name.value != nil)
        let size = downloadResponse.tryMap { url in try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0 }
        #expect((size.value ?? 0) > 0)
        _ = downloadResponse.mapError { AppError.network($0) }
        _ = downloadResponse.tryMapError { error -> AppError in  // DownloadResponse<URL, any Error>
            if error.isCancelled { throw error }
            return AppError.network(error)
        }
        let textOfFile = downloadResponse.tryMap { url in try String(contentsOf: url, encoding: .utf8) }
        #expect(textOfFile.value?.contains("report.csv") == true)
        if let url = downloadResponse.fileURL { try? FileManager.default.removeItem(at: url) }

        // ResponseTask transforms
        let names = try await api.request("users").serializingDecodable([User].self).map { $0.map(\.nick) }.value
        #expect(names == ["bob"])
        let counted = try await api.request("count").serializingString().tryMap { try Int($0, format: .number) }.value
        #expect(counted == 1234)
        let user = try await api.request("users/42").validate().serializingDecodable(User.self)
            .mapError { $0.responseCode == 404 ? CourierError(.serverError, "No such user.") : $0 }.value
        #expect(user.level == 3)
        let download = api.download("report.csv", to: .temporary)
        let fileName = try await download.serializingDownloadedFileURL().map(\.lastPathComponent).value
        let text = try await download.serializingDownloadedFileURL().tryMap { try String(contentsOf: $0, encoding: .utf8) }.value
        let file = try await download.serializingDownloadedFileURL().mapError { $0.isCancelled ? $0 : $0 }.value
        #expect(!fileName.isEmpty && !text.isEmpty)
        try? FileManager.default.removeItem(at: file)

        // Serializer factories and preprocessing
        let data = try await api.request("blob").serializing(using: .data).value
        let empty = try await api.request("users", method: .post).serializing(using: .data(emptyResponseCodes: [200, 201, 204])).value
        let readme = try await api.request("readme").serializing(using: .string).value
        let legacy = try await api.request("legacy").serializing(using: .string(encoding: .isoLatin1)).value
        let json = try await api.request("config").serializing(using: .json(dataPreprocessor: .jsonSecurityPrefix)).value
        let anyJSON = try await api.request("users/42").serializing(using: .json).value
        let me = try await api.request("users/42").serializing(using: .decodable(of: User.self)).value
        let config = try await api.request("config")
            .serializing(using: .decodable(of: Config.self, dataPreprocessor: .jsonSecurityPrefix)).value
        let viaCallback = await withCheckedContinuation { continuation in
            api.request("users/42").response(using: .decodable(of: User.self, dataPreprocessor: .jsonSecurityPrefix)) { response in
                continuation.resume(returning: response.value)
            }
        }
        #expect(!data.isEmpty && empty.isEmpty && !readme.isEmpty && !legacy.isEmpty)
        #expect(json["mode"]?.stringValue == "fast" && anyJSON["nick"]?.stringValue == "bob")
        #expect(me == user && config.mode == "fast" && viaCallback == user)

        // URLEncodedFormEncoder options
        let encoder = URLEncodedFormEncoder(
            arrayEncoding: .noBrackets, boolEncoding: .numeric,
            keyEncoding: .convertToSnakeCase, spaceEncoding: .plusReplaced)
        struct Query: Encodable { let pageSize: Int; let tags: [String]; let draft: Bool }
        #expect(try encoder.encodeQuery(Query(pageSize: 10, tags: ["a b"], draft: true)) == "draft=1&page_size=10&tags=a+b")
        #expect(try URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encodeQuery(["pageSize": 10]) == "page_size=10")

        // Untyped parameters
        let parameters: Parameters = ["q": "swift", "page": 2, "tags": ["a", "b"], "exact": true]
        let search = try await api.request("search", parameters: parameters, encoding: URLEncoding.default).serializingJSON().value
        #expect(search["target"]?.stringValue == "/search?exact=true&page=2&q=swift&tags%5B%5D=a&tags%5B%5D=b")
        let body: Parameters = ["name": "bob", "age": 42, "tags": ["a"], "manager": NSNull()]
        let created = try await api.request("echo", method: .post, parameters: body, encoding: JSONEncoding.default).serializingJSON().value
        #expect(created["body"]?.stringValue == #"{"age":42,"manager":null,"name":"bob","tags":["a"]}"#)
        let nested: Parameters = ["q": "swift", "page": 2, "filters": ["lang": "en", "stars": [1, 2]] as Parameters]
        _ = try await api.request("search", parameters: nested, encoding: .url).serializingJSON().value
        _ = try await api.request("users", method: .post, parameters: ["name": "bob", "admin": false], encoding: .json).serializingData().value
        _ = URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, boolEncoding: .numeric)
        _ = [["tags": ["a", 1] as [any Sendable], "address": ["city": "Oslo", "zip": 123] as Parameters]] as [Parameters]

        // Credentials
        let credential = HTTPCredential(username: "bob", password: "secret")
        let report = try await api.request("reports/1").authenticate(with: credential).validate().serializingData().value
        #expect(String(decoding: report, as: UTF8.self) == "report")
        let sameReport = try await api.request("reports/1")
            .authenticate(with: HTTPCredential(username: "bob", password: "secret"))
            .validate().serializingData().value
        #expect(sameReport == report)
        let preemptive = try await api.request("reports/1").authenticate(username: "bob", password: "secret")
            .validate().serializingString().value
        #expect(preemptive == "report")
        _ = try await api.request("reports/1").authenticate(with: URLCredential(user: "bob", password: "secret", persistence: .none))
            .validate().serializingString().value
        var sessionConfig = SessionConfiguration.default
        sessionConfig.credential = HTTPCredential(username: "bob", password: "secret")
        let authenticated = Session(configuration: sessionConfig, baseURL: apiURL)
        #expect(try await authenticated.request("reports/1").validate().serializingString().value == "report")

        // Request compression
        let entries = (0..<100).map { Entry(line: "entry \($0)") }
        let bigBatch = entries
        let compressing = Session(baseURL: apiURL, interceptor: RequestCompressor(encoding: .gzip, minimumSize: 1024))
        _ = try await compressing.request("events", method: .post, parameters: bigBatch, encoder: .json).serializingData().value
        _ = try await api.request("log", method: .post, parameters: entries, encoder: .json, interceptor: .deflateCompressor)
            .serializingData().value
        _ = try await api.request(
            "log", method: .post, parameters: entries, encoder: .json,
            interceptor: .requestCompressor(encoding: .gzip, minimumSize: 1024)
        ).serializingData().value
        let encodings = server.recordedRequests.suffix(3).map { $0.headers["Content-Encoding"] }
        #expect(encodings == ["gzip", "deflate", "gzip"])

        // Stream uploads
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-example-\(UUID().uuidString).log")
        try Data("line 1\nline 2\n".utf8).write(to: logFile)
        defer { try? FileManager.default.removeItem(at: logFile) }
        let stream = InputStream(url: logFile) ?? InputStream(data: Data())
        let receipt = try await api.upload(stream, to: "logs", method: .put).validate().serializingString().value
        #expect(receipt.contains(#""body":"line 1\nline 2\n""#))
    }
}
