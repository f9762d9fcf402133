import Testing
import Foundation
@testable import Courier
import CourierLocking
import CourierTestServer

/// The base URL rule: relative paths keep the base path, a leading `/` replaces it (with a
/// warning in debug builds), absolute URLs are used as they are.
@Suite struct BaseURLTests {
    @Test(arguments: TransportUnderTest.available)
    func aLeadingSlashReplacesTheBasePathAndDebugBuildsSaySo(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/v2/users") { _ in .text("v2") }
            server.route("/users") { _ in .text("root") }
            let notices = NoticeRecorder()
            var configuration = SessionConfiguration.testing
            configuration.transport = transport.choice
            let api = Session(configuration: configuration, baseURL: server.url("/v2"), eventMonitors: [notices])
            #expect(try await api.request("users").serializingString().value == "v2")
            #expect(notices.all.isEmpty, "a relative path keeps the base path, silently")
            #expect(try await api.request("/users").serializingString().value == "root")
            #expect(server.recordedRequests.map(\.path) == ["/v2/users", "/users"])
            #if DEBUG
            let dropped = notices.all.filter { $0.kind == .basePathDropped }
            #expect(dropped.count == 1, "\(notices.all)")
            #expect(dropped.first?.message.contains("replaces the base URL's path /v2") == true, "\(dropped)")
            #expect(dropped.first?.message.contains("Write \"users\" to keep the base path") == true, "\(dropped)")
            #else
            #expect(notices.all.isEmpty)
            #endif
        }
    }

    @Test func theWarningIsPrintedOncePerBaseAndPath() {
        let lines = Locked([String]())
        let previous = DebugWarnings.sink.withLock { sink in
            defer { sink = { line in lines.withLock { $0.append(line) } } }
            return sink
        }
        defer { DebugWarnings.sink.withLock { $0 = previous } }
        // A host no test serves: the warning is about resolving, and nothing is sent.
        let base = "http://base-url-tests.invalid/api/\(UUID().uuidString)"
        let api = Session(baseURL: URL(string: base))
        for _ in 0..<3 { _ = try? api.resolve(URL(string: "/health")!) }
        _ = try? api.resolve(URL(string: "health")!)
        _ = try? api.resolve(URL(string: "//other.invalid/x")!)
        _ = try? api.resolve(URL(string: "https://other.invalid/x")!)
        #if DEBUG
        let mine = lines.withLock { $0 }.filter { $0.contains(base) }
        #expect(mine.count == 1, "\(mine)")
        #expect(mine.first?.hasPrefix("Courier: warning: \"/health\" starts with '/'") == true, "\(mine)")
        #endif
    }

    @Test(arguments: [
        ("https://api.x/v2", "users/42", "https://api.x/v2/users/42"),
        ("https://api.x/v2/", "users/42", "https://api.x/v2/users/42"),
        ("https://api.x/v2", "/users/42", "https://api.x/users/42"),
        ("https://api.x/v2/", "/users/42", "https://api.x/users/42"),
        ("https://api.x", "/users/42", "https://api.x/users/42"),
        ("https://api.x/v2", "https://other.x/a", "https://other.x/a"),
        ("https://api.x/v2", "users?q=1", "https://api.x/v2/users?q=1"),
    ])
    func theRuleAsDocumented(base: String, path: String, expected: String) throws {
        let api = Session(baseURL: URL(string: base))
        #expect(try api.resolve(try #require(URL(string: path))).absoluteString == expected)
    }
}
