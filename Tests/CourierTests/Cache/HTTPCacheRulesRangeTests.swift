import Foundation
import Testing
@testable import Courier

/// Range requests answered from the store (RFC 9111 §3.3–3.4, RFC 9110 §13.1.5 and §14), one row
/// per rule, without I/O: how `Range` is read, which answer a stored response gives, when a `206`
/// is kept, and how two parts combine.
@Suite struct HTTPCacheRulesRangeTests {
    // MARK: Reading Range

    struct ParseRow: Sendable, CustomTestStringConvertible {
        let field: String
        let expected: ByteRangeRequest
        var testDescription: String { field }
    }

    static let parseRows: [ParseRow] = [
        ParseRow(field: "bytes=0-99", expected: .single(.from(0, through: 99))),
        ParseRow(field: "bytes=100-", expected: .single(.from(100, through: nil))),
        ParseRow(field: "bytes=-500", expected: .single(.suffix(500))),
        ParseRow(field: " BYTES = 7-7 ", expected: .single(.from(7, through: 7))),
        ParseRow(field: "bytes=0-1, ", expected: .single(.from(0, through: 1))),
        ParseRow(field: "bytes=0-1,5-6", expected: .multiple),
        ParseRow(field: "bytes=x,0-1", expected: .none),
        ParseRow(field: "bytes=5-1", expected: .none),
        ParseRow(field: "bytes=", expected: .none),
        ParseRow(field: "bytes=abc", expected: .none),
        ParseRow(field: "bytes=1-2-3", expected: .none),
        ParseRow(field: "bytes=+1-2", expected: .none),
        ParseRow(field: "items=0-1", expected: .none),
        ParseRow(field: "bytes 0-1", expected: .none),
        ParseRow(field: "bytes=99999999999999999999999-", expected: .single(.from(.max, through: nil))),
        ParseRow(field: "bytes=0-99999999999999999999999", expected: .single(.from(0, through: .max))),
        ParseRow(field: "bytes=-0", expected: .single(.suffix(0))),
    ]

    @Test(arguments: parseRows)
    func rangeFieldsAreReadAsRFC9110Says(_ row: ParseRow) {
        #expect(ByteRangeRequest(fieldValue: row.field) == row.expected)
    }

    @Test func anOverlongRangeFieldIsIgnored() {
        let long = "bytes=" + Array(repeating: "0-1", count: 2000).joined(separator: ",")
        #expect(ByteRangeRequest(["Range": long]) == .none)
        #expect(ByteRangeRequest(["Range": "bytes=0-1"]) == .single(.from(0, through: 1)))
        #expect(ByteRangeRequest([:]) == .none)
    }

    @Test func specsResolveAgainstALength() {
        #expect(ByteRangeSpec.from(0, through: 99).resolved(length: 1000) == 0...99)
        #expect(ByteRangeSpec.from(990, through: 2000).resolved(length: 1000) == 990...999)
        #expect(ByteRangeSpec.from(999, through: nil).resolved(length: 1000) == 999...999)
        #expect(ByteRangeSpec.from(1000, through: nil).resolved(length: 1000) == nil, "§14.1.1 first-pos at the end: unsatisfiable")
        #expect(ByteRangeSpec.from(.max, through: nil).resolved(length: 1000) == nil)
        #expect(ByteRangeSpec.suffix(500).resolved(length: 100) == 0...99, "a suffix longer than the body is all of it")
        #expect(ByteRangeSpec.suffix(10).resolved(length: 100) == 90...99)
        #expect(ByteRangeSpec.suffix(0).resolved(length: 100) == nil)
        #expect(ByteRangeSpec.from(0, through: nil).resolved(length: 0) == nil, "nothing to select in an empty body")
    }

    @Test func contentRangeIsReadStrictly() {
        #expect(ContentRange("bytes 0-99/1000") == ContentRange(first: 0, last: 99, completeLength: 1000))
        #expect(ContentRange(" bytes 5-5/6 ")?.count == 1)
        #expect(ContentRange("bytes 0-99/*") == nil, "an unknown complete length")
        #expect(ContentRange("bytes */1000") == nil, "a 416's form")
        #expect(ContentRange("bytes 100-99/1000") == nil)
        #expect(ContentRange("bytes 0-1000/1000") == nil)
        #expect(ContentRange("items 0-1/2") == nil)
        #expect(ContentRange("bytes 0-1/9999999999999999999999") == nil)
        #expect(ContentRange("bytes -1-5/10") == nil)
        #expect(ContentRange(first: 3, last: 7, completeLength: 9).fieldValue == "bytes 3-7/9")
    }

    // MARK: Answers from the store

    struct AnswerRow: Sendable, CustomTestStringConvertible {
        let note: String
        var method: HTTPMethod = .get
        var request: HTTPHeaders = [:]
        var stored = StoredRow(["ETag": "\"s\"", "Last-Modified": RuleClock.date(-3600)])
        var length: Int64 = 1000
        let expected: RangeAnswer
        var testDescription: String { note }
    }

    static let partialStored = StoredRow(status: 206, ["ETag": "\"s\"", "Content-Range": "bytes 100-199/1000"])

    static let answerRows: [AnswerRow] = [
        AnswerRow(note: "no Range: the whole stored response", expected: .whole),
        AnswerRow(
            note: "RFC 9110 §14.2 one satisfiable range of a stored 200: a 206 of those bytes", request: ["Range": "bytes=0-99"],
            expected: .partial(bytes: 0...99, completeLength: 1000, storedFrom: 0)),
        AnswerRow(
            note: "§14.1.1 a last position past the end is cut to it", request: ["Range": "bytes=900-5000"],
            expected: .partial(bytes: 900...999, completeLength: 1000, storedFrom: 0)),
        AnswerRow(
            note: "§14.1.1 a suffix", request: ["Range": "bytes=-10"], expected: .partial(bytes: 990...999, completeLength: 1000, storedFrom: 0)),
        AnswerRow(
            note: "§15.5.17 a range past the end: 416", request: ["Range": "bytes=1000-"], expected: .unsatisfiable(completeLength: 1000)),
        AnswerRow(
            note: "§15.5.17 a suffix of zero: 416", request: ["Range": "bytes=-0"], expected: .unsatisfiable(completeLength: 1000)),
        AnswerRow(
            note: "§14.2 several ranges go to the server", request: ["Range": "bytes=0-1,5-6"],
            expected: .network(reason: "several ranges are answered by the server")),
        AnswerRow(note: "§14.2 an invalid Range is ignored", request: ["Range": "bytes=9-1"], expected: .whole),
        AnswerRow(note: "§14.2 another unit is ignored", request: ["Range": "items=0-1"], expected: .whole),
        AnswerRow(note: "§14.2 Range on HEAD is ignored", method: .head, request: ["Range": "bytes=0-1"], expected: .whole),
        AnswerRow(
            note: "§14.2 Range on a stored 404 is ignored", request: ["Range": "bytes=0-1"], stored: StoredRow(status: 404, [:]),
            expected: .whole),
        AnswerRow(
            note: "§13.1.5 If-Range with the stored strong ETag: the range",
            request: ["Range": "bytes=0-9", "If-Range": "\"s\""], expected: .partial(bytes: 0...9, completeLength: 1000, storedFrom: 0)),
        AnswerRow(
            note: "§13.1.5 If-Range with another ETag: the whole response, as the origin would send",
            request: ["Range": "bytes=0-9", "If-Range": "\"other\""], expected: .whole),
        AnswerRow(
            note: "§13.1.5 If-Range with a weak ETag never matches",
            request: ["Range": "bytes=0-9", "If-Range": "W/\"s\""], expected: .whole),
        AnswerRow(
            note: "§13.1.5 a stored weak ETag never matches",
            request: ["Range": "bytes=0-9", "If-Range": "\"s\""], stored: StoredRow(["ETag": "W/\"s\""]), expected: .whole),
        AnswerRow(
            note: "§13.1.5 If-Range with the stored Last-Modified, a strong one (an hour before Date): the range",
            request: ["Range": "bytes=0-9", "If-Range": RuleClock.date(-3600)], expected: .partial(bytes: 0...9, completeLength: 1000, storedFrom: 0)),
        AnswerRow(
            note: "§8.8.2.2 a Last-Modified equal to Date is weak: If-Range does not match",
            request: ["Range": "bytes=0-9", "If-Range": RuleClock.date(0)], stored: StoredRow(["Last-Modified": RuleClock.date(0)]),
            expected: .whole),
        AnswerRow(
            note: "§13.1.5 If-Range with another date: the whole response",
            request: ["Range": "bytes=0-9", "If-Range": RuleClock.date(-60)], expected: .whole),
        AnswerRow(
            note: "§13.1.5 an If-Range that is neither: the whole response",
            request: ["Range": "bytes=0-9", "If-Range": "yesterday"], expected: .whole),
        AnswerRow(
            note: "§3.3 a stored part answers a range within it, from its own offset",
            request: ["Range": "bytes=150-160"], stored: partialStored, length: 100,
            expected: .partial(bytes: 150...160, completeLength: 1000, storedFrom: 100)),
        AnswerRow(
            note: "§3.3 a stored part answers exactly its own bytes",
            request: ["Range": "bytes=100-199"], stored: partialStored, length: 100,
            expected: .partial(bytes: 100...199, completeLength: 1000, storedFrom: 100)),
        AnswerRow(
            note: "§3.3 a stored part never answers a request without Range",
            stored: partialStored, length: 100, expected: .network(reason: "only part of the response is stored")),
        AnswerRow(
            note: "§3.3 a stored part never answers a HEAD",
            method: .head, stored: partialStored, length: 100, expected: .network(reason: "only part of the response is stored")),
        AnswerRow(
            note: "§3.3 a range reaching past the stored part goes to the server",
            request: ["Range": "bytes=150-250"], stored: partialStored, length: 100,
            expected: .network(reason: "the stored part does not hold the range")),
        AnswerRow(
            note: "§15.5.17 a stored part knows the complete length: 416 past it",
            request: ["Range": "bytes=1000-"], stored: partialStored, length: 100, expected: .unsatisfiable(completeLength: 1000)),
        AnswerRow(
            note: "§13.1.5 a stored part with an If-Range it does not match: the server",
            request: ["Range": "bytes=150-160", "If-Range": "\"other\""], stored: partialStored, length: 100,
            expected: .network(reason: "If-Range does not match the stored part")),
        AnswerRow(
            note: "a stored part whose length does not match its Content-Range is never used",
            request: ["Range": "bytes=150-160"], stored: partialStored, length: 99,
            expected: .network(reason: "the stored partial response does not say which bytes it holds")),
    ]

    @Test(arguments: answerRows)
    func answersFromTheStore(_ row: AnswerRow) {
        let answer = HTTPCacheRules().rangeAnswer(method: row.method, requestHeaders: row.request, entry: row.stored.head, storedLength: row.length)
        #expect(answer == row.expected, "\(row.note): \(answer)")
    }

    // MARK: Storing and combining parts

    @Test func whichPartialResponsesAreKept() {
        let rules = HTTPCacheRules()
        let range: HTTPHeaders = ["Range": "bytes=0-9"]
        let good: HTTPHeaders = ["ETag": "\"s\"", "Content-Range": "bytes 0-9/100", "Cache-Control": "max-age=60"]
        #expect(rules.refusalToStore(method: .get, requestHeaders: range, statusCode: 206, responseHeaders: good) == nil)
        var weak = good
        weak.update(name: "ETag", value: "W/\"s\"")
        #expect(rules.refusalToStore(method: .get, requestHeaders: range, statusCode: 206, responseHeaders: weak)?.contains("strong ETag") == true)
        var unknownLength = good
        unknownLength.update(name: "Content-Range", value: "bytes 0-9/*")
        #expect(
            rules.refusalToStore(method: .get, requestHeaders: range, statusCode: 206, responseHeaders: unknownLength)?.contains("Content-Range")
                == true)
        var multipart = good
        multipart.update(name: "Content-Type", value: "multipart/byteranges; boundary=x")
        #expect(
            rules.refusalToStore(method: .get, requestHeaders: range, statusCode: 206, responseHeaders: multipart)?.contains("several parts") == true)
        var coded = good
        coded.update(name: "Content-Encoding", value: "gzip")
        #expect(rules.refusalToStore(method: .get, requestHeaders: range, statusCode: 206, responseHeaders: coded)?.contains("coding") == true)
        #expect(
            rules.refusalToStore(method: .get, requestHeaders: [:], statusCode: 206, responseHeaders: good)?.contains("without one range") == true)
        var noStore = good
        noStore.update(name: "Cache-Control", value: "no-store")
        #expect(rules.refusalToStore(method: .get, requestHeaders: range, statusCode: 206, responseHeaders: noStore) == "no-store")
    }

    struct CombineRow: Sendable, CustomTestStringConvertible {
        let note: String
        let stored: String
        var storedTag = "\"s\""
        let new: String
        var newTag = "\"s\""
        /// `nil`: not combined; else before, after, combined Content-Range (`nil` for a whole 200).
        let expected: (before: Range<Int64>?, after: Range<Int64>?, range: String?)?
        var testDescription: String { note }
    }

    static let combineRows: [CombineRow] = [
        CombineRow(
            note: "§3.4 the next bytes extend the part", stored: "bytes 0-9/100", new: "bytes 10-19/100", expected: (0..<10, nil, "bytes 0-19/100")),
        CombineRow(note: "§3.4 the bytes before it", stored: "bytes 10-19/100", new: "bytes 0-9/100", expected: (nil, 0..<10, "bytes 0-19/100")),
        CombineRow(
            note: "§3.4 overlapping parts: the new bytes win", stored: "bytes 0-19/100", new: "bytes 10-29/100",
            expected: (0..<10, nil, "bytes 0-29/100")),
        CombineRow(
            note: "§3.4 a new part inside the stored one", stored: "bytes 0-99/200", new: "bytes 10-19/200",
            expected: (0..<10, 20..<100, "bytes 0-99/200")),
        CombineRow(
            note: "§3.4 the whole representation becomes a 200", stored: "bytes 0-49/100", new: "bytes 50-99/100", expected: (0..<50, nil, nil)),
        CombineRow(note: "a gap between the parts: not combined", stored: "bytes 0-9/100", new: "bytes 20-29/100", expected: nil),
        CombineRow(note: "§3.4 another ETag: not combined", stored: "bytes 0-9/100", new: "bytes 10-19/100", newTag: "\"t\"", expected: nil),
        CombineRow(
            note: "§3.4 weak ETags: not combined", stored: "bytes 0-9/100", storedTag: "W/\"s\"", new: "bytes 10-19/100", newTag: "W/\"s\"",
            expected: nil),
        CombineRow(note: "another complete length: not combined", stored: "bytes 0-9/100", new: "bytes 10-19/101", expected: nil),
    ]

    @Test(arguments: combineRows)
    func partsCombine(_ row: CombineRow) throws {
        let stored = StoredRow(status: 206, ["ETag": row.storedTag, "Content-Range": row.stored]).head
        let new = StoredRow(status: 206, ["ETag": row.newTag, "Content-Range": row.new, "X-New": "1"], received: 5).head
        let storedLength = try #require(ContentRange(row.stored)).count
        let combination = HTTPCacheRules().combination(of: stored, storedLength: storedLength, with: new)
        guard let expected = row.expected else {
            #expect(combination == nil, "\(row.note)")
            return
        }
        let combined = try #require(combination, "\(row.note)")
        #expect(combined.before == expected.before, "\(row.note)")
        #expect(combined.after == expected.after, "\(row.note)")
        #expect(combined.head.headers["Content-Range"] == expected.range, "\(row.note)")
        #expect(combined.head.statusCode == (expected.range == nil ? 200 : 206), "\(row.note)")
        #expect(combined.head.headers["X-New"] == "1", "the new response's fields")
        let completeLength = try #require(ContentRange(row.new)).completeLength
        #expect(combined.length == (expected.range.flatMap { ContentRange($0)?.count } ?? completeLength))
    }
}
