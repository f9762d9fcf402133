import Foundation
import Testing

/// `courier demo`: exits 0, prints the figures it claims, and leaves no temporary files.
@Suite struct DemoTests {
    @Test func demoRunsOfflineAndItsFiguresAddUp() async throws {
        let temporary = try TemporaryDirectory("demo-tmp")
        defer { temporary.remove() }
        let result = try await runCLI(["demo"], environment: ["TMPDIR": temporary.url.path], timeout: .seconds(120))
        #expect(result.status == 0, "\(result)")
        let out = result.stdoutText
        #expect(out.contains("4 of 4 steps behaved as described"), "\(out)")
        #expect(out.contains("temporary files removed."))

        // 1. JSON decoded and pretty-printed.
        #expect(out.contains("GET /api/users/42 → 200 OK"))
        #expect(out.contains(#"decoded: DemoUser(id: 42, nick: "ada", level: 7, tags: ["swift", "http"])"#))
        #expect(out.contains("\n     \"nick\": \"ada\","), "pretty-printed body")
        // 2. Validation failing readably.
        #expect(out.contains("GET /api/users/99 → 404 Not Found"))
        #expect(out.contains("validationFailed: Response status code 404"))
        // 3. Interrupted and resumed: re-used + fetched = the file, and the server sent exactly the file.
        let reused = try #require(Self.number(after: "re-used ", in: out))
        let fetched = try #require(Self.number(after: "bytes from disk, fetched ", in: out))
        let sent = try #require(Self.number(after: "\n   the server sent ", in: out))
        let fileSize = try #require(Self.number(after: "bytes in all for a file of ", in: out))
        #expect(reused > 0 && fetched > 0)
        #expect(reused + fetched == fileSize)
        #expect(sent == fileSize, "nothing fetched twice")
        #expect(out.contains("the file matches the source byte for byte"))
        #expect(out.contains("with Content-Range bytes \(reused)-\(fileSize - 1)/\(fileSize)"))
        // 4. Deduplication.
        #expect(out.contains("the server saw 1 request\n"))
        #expect(out.contains("deduplicator statistics: transfers=1 joined=9"))
        #expect(out.contains("10 responses, all identical"))
        let each = try #require(Self.number(after: "all identical (", in: out))
        #expect(Self.number(after: "bytes each; the server sent ", in: out) == each, "one transfer's worth of bytes")

        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: temporary.url.path)
            .filter { !$0.isEmpty && $0 != "courier" }
        #expect(leftovers.isEmpty, "temporary files left behind: \(leftovers)")
    }

    /// The integer right after `marker` in `text`.
    static func number(after marker: String, in text: String) -> Int64? {
        guard let range = text.range(of: marker) else { return nil }
        return Int64(String(text[range.upperBound...].prefix { $0.isNumber }))
    }
}
