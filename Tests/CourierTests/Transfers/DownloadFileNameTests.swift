import CourierTestServer
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Issue 44: the rule that turns what a server suggests into a file name (``SuggestedFileName``),
/// as tables of pure cases, then end to end into a directory on both transports. Whatever a
/// server sends, the name is never empty, never leaves the directory, is valid UTF-8 and fits
/// NAME_MAX (255 bytes).
@Suite struct DownloadFileNameTests {
    // Literals with escapes are kept out of #expect and #require, whose expansion mangles them.
    static let acute = "\u{301}"
    static let rightToLeftOverride = "\u{202E}"

    /// (what the server suggested, what `sanitize` makes of it; nil: nothing usable)
    static let sanitized: [(String, String?)] = [
        ("report.pdf", "report.pdf"),
        ("", nil),
        // Dot names: nothing hidden, no `.` or `..`.
        (".", nil), ("..", nil), ("...", nil), (". . .", nil), (".bashrc", "bashrc"), ("..." + acute, acute),
        // Separators and what could smuggle one.
        ("../../etc/passwd", "passwd"), ("a\\b\\c.txt", "c.txt"), ("dir/", "dir"), ("/", nil), ("x/" + acute + "y.txt", acute + "y.txt"),
        // NUL and other control characters, `:`, bidirectional controls.
        ("a\u{0}b", "ab"), ("a\u{1F}b\u{7F}c\u{85}d", "abcd"), ("line\r\nbreak", "linebreak"), ("C:evil.txt", "Cevil.txt"),
        ("photo" + rightToLeftOverride + "gpj.exe", "photogpj.exe"), ("\u{0}\u{0}", nil),
        // Whitespace at the ends.
        ("  spaced name.txt  ", "spaced name.txt"), (" . hidden", "hidden"),
        // Windows device names, alone or with an extension, any case.
        ("CON", "_CON"), ("nul.txt", "_nul.txt"), ("com1", "_com1"), ("LPT9.log", "_LPT9.log"), ("conin$", "_conin$"),
        ("console", "console"), ("COM10", "COM10"), ("auxiliary.txt", "auxiliary.txt"),
        // Only combining marks: a name as any other (it has bytes, no separator, no dot).
        (acute, acute), (String(repeating: acute, count: 3), String(repeating: acute, count: 3)),
    ]

    @Test(arguments: sanitized.indices)
    func sanitizing(index: Int) {
        let (input, expected) = Self.sanitized[index]
        let name = SuggestedFileName.sanitize(input)
        #expect(name == expected, "\(input.debugDescription) gave \(name.debugDescription)")
        if let name { Self.expectSafe(name) }
    }

    /// (a long name, the length of the name it must be cut to, in bytes)
    static let long: [(String, String)] = [
        // 1-, 2-, 3- and 4-byte characters.
        (String(repeating: "a", count: 300), String(repeating: "a", count: 255)),
        (String(repeating: "é", count: 200), String(repeating: "é", count: 127)),
        (String(repeating: "中", count: 100), String(repeating: "中", count: 85)),
        (String(repeating: "😀", count: 100), String(repeating: "😀", count: 63)),
        // Characters of several scalars are kept whole while one fits.
        (String(repeating: "e" + acute, count: 200), String(repeating: "e" + acute, count: 85)),
        (String(repeating: "👨‍👩‍👧‍👦", count: 20), String(repeating: "👨‍👩‍👧‍👦", count: 10)),
        (String(repeating: "🇫🇷", count: 40), String(repeating: "🇫🇷", count: 31)),
        (String(repeating: "a", count: 254) + "é", String(repeating: "a", count: 254)),
        // One character longer than the limit is cut between its scalars (the name).
        ("a" + String(repeating: acute, count: 300), "a" + String(repeating: acute, count: 127)),
        (String(repeating: acute, count: 300), String(repeating: acute, count: 127)),
        ("中" + String(repeating: acute, count: 300), "中" + String(repeating: acute, count: 126)),
        ("😀" + String(repeating: "\u{FE0F}", count: 100), "😀" + String(repeating: "\u{FE0F}", count: 83)),
    ]

    @Test(arguments: long.indices)
    func longNamesAreCutToNameMaxAndNeverToNothing(index: Int) {
        let (input, expected) = Self.long[index]
        let name = SuggestedFileName.sanitize(input)
        #expect(name == expected, "cut to \(name?.utf8.count ?? -1) bytes, expected \(expected.utf8.count)")
        #expect(name.map { input.hasPrefix($0) || input.unicodeScalars.starts(with: $0.unicodeScalars) } == true)
        if let name { Self.expectSafe(name) }
    }

    @Test func truncationNeverEmptiesANonEmptyName() {
        for limit in [4, 5, 10, 255] {
            for input in Self.long.map(\.0) + ["x", "😀", "a" + String(repeating: Self.acute, count: 10)] {
                let cut = SuggestedFileName.truncated(input, toBytes: limit)
                #expect(!cut.isEmpty && cut.utf8.count <= limit, "\(limit) bytes of \(input.utf8.count)")
                #expect(input.unicodeScalars.starts(with: cut.unicodeScalars), "a prefix, in whole scalars")
            }
        }
    }

    /// (Content-Disposition, the response's URL, the request's URL, the name)
    static let derived: [(String?, String?, String?, String)] = [
        ("attachment; filename=\"report.pdf\"", nil, "http://h/files/1", "report.pdf"),
        ("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf; filename=\"resume.pdf\"", nil, "http://h/1", "résumé.pdf"),
        // The issue: one letter and 300 combining marks (601 bytes) gives a file, cut within the character.
        ("attachment; filename*=UTF-8''a" + String(repeating: "%CC%81", count: 300), nil, "http://h/dl", "a" + String(repeating: acute, count: 127)),
        // filename* unusable (dots, not UTF-8, unknown charset, malformed): filename is next.
        ("attachment; filename*=UTF-8''%2E%2E; filename=\"report.pdf\"", nil, "http://h/1", "report.pdf"),
        ("attachment; filename*=UTF-8''%FF%FE; filename=\"x.txt\"", nil, "http://h/1", "x.txt"),
        ("attachment; filename*=KOI8-R''%F0; filename=\"y.txt\"", nil, "http://h/1", "y.txt"),
        ("attachment; filename*=no-quotes; filename=\"z.txt\"", nil, "http://h/1", "z.txt"),
        ("attachment; filename*=ISO-8859-1''%E9t%E9.txt", nil, "http://h/1", "été.txt"),
        // Both unusable: the URL's last path component, decoded and made safe.
        ("attachment; filename*=UTF-8''..; filename=\"..\"", nil, "http://h/files/r%C3%A9sum%C3%A9.pdf", "résumé.pdf"),
        ("attachment; filename=\"/\"", nil, "http://h/x/..%2F..%2Fetc%2Fpasswd", "passwd"),
        (nil, nil, "http://h/a%00b.bin", "ab.bin"),
        (nil, nil, "http://h/dir/CON", "_CON"),
        // The response's URL (after redirects) first, then the request's.
        (nil, "http://cdn/blobs/42.bin", "http://h/files/report", "42.bin"),
        (nil, "http://cdn/", "http://h/files/report.bin", "report.bin"),
        // Nothing usable at all: the documented default.
        ("attachment; filename=\"...\"", nil, "http://h/", SuggestedFileName.fallback),
        (nil, nil, "http://h", SuggestedFileName.fallback), (nil, nil, nil, SuggestedFileName.fallback),
        ("inline", nil, "http://h/%2E%2E", SuggestedFileName.fallback),
    ]

    @Test(arguments: derived.indices)
    func derivingFromHeaderAndURLs(index: Int) {
        let (disposition, responseURL, requestURL, expected) = Self.derived[index]
        let name = SuggestedFileName.make(contentDisposition: disposition, urls: [responseURL.flatMap(URL.init), requestURL.flatMap(URL.init)])
        #expect(name == expected, "\(name.debugDescription)")
        Self.expectSafe(name)
    }

    @Test func theDefaultNameIsDownload() {
        #expect(SuggestedFileName.fallback == "download")
        #expect(SuggestedFileName.maximumNameBytes == 255)
    }

    /// What every name must be: something to create inside a directory.
    static func expectSafe(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!name.isEmpty, sourceLocation: sourceLocation)
        #expect(name.utf8.count <= 255, sourceLocation: sourceLocation)
        #expect(!name.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.value == 0 }, sourceLocation: sourceLocation)
        #expect(name.unicodeScalars.first != ".", sourceLocation: sourceLocation)
        #expect(String(validating: Array(name.utf8), as: UTF8.self) == name, sourceLocation: sourceLocation)
    }

    // MARK: End to end

    /// (Content-Disposition, request path, the file name the download must get)
    static let downloads: [(String?, String, String)] = [
        ("attachment; filename*=UTF-8''a" + String(repeating: "%CC%81", count: 300), "/dl", "a" + String(repeating: acute, count: 127)),
        ("attachment; filename=\"..\"", "/", SuggestedFileName.fallback),
        ("attachment; filename*=UTF-8''%2E%2E%2F%2E%2E%2Fescape.txt", "/x", "escape.txt"),
    ]

    @Test(arguments: TransportUnderTest.available, downloads.indices)
    func aDownloadToADirectoryAlwaysGetsAFileInIt(transport: TransportUnderTest, index: Int) async throws {
        let (disposition, path, expected) = Self.downloads[index]
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-names-\(UUID().uuidString)", isDirectory: true)
        let directory = root.appendingPathComponent("dl", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServer { server in
            var response = MockResponse.ok("content")
            if let disposition { response = response.header("Content-Disposition", disposition) }
            server.enqueue([response, response])
            let session = makeSession(transport, server: server)
            let file = try await session.download(server.url(path), to: .directory(directory)).serializingDownloadedFileURL().value
            #expect(file.lastPathComponent == expected)
            #expect(file.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
            #expect(try String(contentsOf: file, encoding: .utf8) == "content")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["dl"], "nothing written beside the directory")

            let temporary = try await session.download(server.url(path), to: .temporary).serializingDownloadedFileURL().value
            defer { try? FileManager.default.removeItem(at: temporary) }
            #expect(temporary.lastPathComponent.hasPrefix("courier-"))
            #expect(temporary.lastPathComponent.utf8.count <= 255)
            #expect(try String(contentsOf: temporary, encoding: .utf8) == "content")
        }
    }
}
