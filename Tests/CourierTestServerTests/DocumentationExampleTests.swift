import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

extension CourierTestServerTests {
    /// Runs the example from docs/testing-with-courier-test-server.md, and checks the document
    /// still shows exactly this code.
    @Suite struct DocumentationExample {
        @Test func fetchesTheGreeting() async throws {
            let server = try TestServer()
            defer { #expect(server.shutdown().problems == []) }
            server.enqueue(.json(#"{"greeting":"hello"}"#).header("Cache-Control", "no-store"))

            let url = server.url("/greeting?lang=en")
            let (data, response) = try await URLSession.shared.data(from: url)

            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == #"{"greeting":"hello"}"#)
            let request = try await server.takeRequest(timeout: .seconds(2))
            #expect(request.method == "GET")
            #expect(request.path == "/greeting")
            #expect(request.query["lang"] == "en")
        }

        @Test func theDocumentShowsThisExample() throws {
            let testFile = URL(fileURLWithPath: #filePath)
            let document = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/testing-with-courier-test-server.md")
            let markdown = try String(contentsOf: document, encoding: .utf8)
            let source = try String(contentsOf: testFile, encoding: .utf8)
            // The first Swift block of the document is the runnable example.
            let blocks = markdown.components(separatedBy: "```swift\n").dropFirst()
            let example = try #require(blocks.first?.components(separatedBy: "```").first)
            let exampleLines = Self.codeLines(example)
            let sourceLines = Self.codeLines(source)
            #expect(exampleLines.count > 10)
            var position = sourceLines.startIndex
            for line in exampleLines {
                let found = sourceLines[position...].firstIndex(of: line)
                #expect(found != nil, "document line not in this test, in order: \(line)")
                position = (found ?? position) + 1
            }
        }

        static func codeLines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }
}
