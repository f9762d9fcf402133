@testable import courier
import Foundation
import Testing

/// Issue 44: `-O` names the file by the library's rule for download names, from the URL path's
/// last segment as written (percent-escapes kept, as curl keeps them).
@Suite struct RemoteNameTests {
    static let acute = "\u{301}"

    /// (URL, the file name; nil: "Remote file name has no length")
    static let cases: [(String, String?)] = [
        ("http://h/files/report.bin", "report.bin"),
        ("http://h/files/report%20final.pdf", "report%20final.pdf"),
        // An encoded separator stays text: nothing is written outside the current directory.
        ("http://h/x/..%2F..%2Fetc%2Fpasswd", "%2F..%2Fetc%2Fpasswd"),
        ("http://h/.hidden", "hidden"),
        ("http://h/nul", "_nul"),
        ("http://h/files/" + String(repeating: "a", count: 300), String(repeating: "a", count: 255)),
        ("http://h/", nil), ("http://h", nil), ("http://h/dir/", nil), ("http://h/a/..", nil), ("http://h/%2E%2E", "%2E%2E"),
    ]

    @Test(arguments: cases.indices)
    func remoteNames(index: Int) throws {
        let (text, expected) = Self.cases[index]
        let url = try #require(URL(string: text))
        #expect((try? TransferTarget.remoteName(of: url)) == expected, "\(text)")
    }

    @Test func aNameThatSanitisesToNothingIsRefusedAsCurlDoes() {
        #expect(throws: UsageError.self) { try FetchOptions.parse(["-O", "http://h/..."], environment: [:]) }
        let options = try? FetchOptions.parse(["-O", "http://h/x/..%2F..%2Fescape"], environment: [:])
        #expect(options?.output == "%2F..%2Fescape")
    }
}
