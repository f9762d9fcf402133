import Testing
@testable import Courier

/// The trailer section as lines → outcomes, without I/O: what the curl transport keeps, skips and
/// refuses after a response body.
@Suite struct CurlTrailerSectionTests {
    /// Feeds `lines` to a section of `limit` bytes; the outcomes and the fields kept, as `name: value`.
    static func run(_ lines: [String], limit: Int = 300 << 10) -> (outcomes: [CurlTrailerSection.Outcome], fields: [String]?) {
        var section = CurlTrailerSection(limit: limit)
        let outcomes = lines.map { line in Array(line.utf8).withUnsafeBytes { section.receive($0) } }
        return (outcomes, section.fields.map { $0.map { "\($0.name): \($0.value)" } })
    }

    @Test(
        "each line's outcome and the fields kept",
        arguments: [
            // Fields in wire order, repeated names apart, names as sent, values trimmed; the blank line ends it.
            (
                ["X-Checksum: abc\r\n", "x-multi: one\r\n", "X-Multi:  two \r\n", "\r\n"],
                [.kept, .kept, .kept, .skipped] as [CurlTrailerSection.Outcome],
                ["X-Checksum: abc", "x-multi: one", "X-Multi: two"] as [String]?
            ),
            // An empty section: no fields at all, not an empty list.
            (["\r\n"], [.skipped], nil),
            // A status line (libcurl's next head) is not kept.
            (["HTTP/1.1 200 OK\r\n"], [.skipped], nil),
            // A line that is not a field means the body's framing was wrong.
            (["X-Ok: 1\r\n", "0x10 junk\r\n"], [.kept, .notAField], ["X-Ok: 1"]),
            ([": no name\r\n"], [.notAField], nil),
        ])
    func lines(lines: [String], outcomes expected: [CurlTrailerSection.Outcome], fields: [String]?) {
        let (outcomes, kept) = Self.run(lines)
        #expect(outcomes == expected)
        #expect(kept == fields)
    }

    @Test("the section is held to its limit, counting every line")
    func limit() {
        // 15 + 15 + 2 bytes fit 32 exactly; 15 + 16 pass 30.
        let (outcomes, kept) = Self.run(["X-One: 111111\r\n", "X-Two: 222222\r\n", "\r\n"], limit: 32)
        #expect(outcomes == [.kept, .kept, .skipped])
        #expect(kept == ["X-One: 111111", "X-Two: 222222"])
        let (over, _) = Self.run(["X-One: 111111\r\n", "X-Two: 2222222\r\n"], limit: 30)
        #expect(over == [.kept, .tooLarge])
    }
}
