import Foundation

/// What the side-by-side suite compares between a curl run and a courier run of one command line.
enum Aspect: String, Sendable, CaseIterable, Comparable {
    /// The exit status.
    case exitCode
    /// Standard output's bytes (its heads apart, with ``SideBySideCase/Heads/standardOutput``).
    case standardOutput
    /// The files the command left in its directory: names and bytes.
    case files
    /// Each head's status line, reason phrase included.
    case statusLine
    /// Each head's field lines as a set, names compared case-insensitively.
    case fieldSet
    /// The spelling of the field names (`ETag` or `Etag`, `content-type` or `Content-Type`).
    case fieldNameCase
    /// The order of the field lines (first appearance of each name).
    case fieldOrder
    /// `-v`'s request-head field lines (`> `), as a set.
    case requestFields

    static func < (lhs: Aspect, rhs: Aspect) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A difference between curl and courier that is there on purpose, each a row of the table in
/// `docs/curl-compatibility.md` (the suite checks the table and this list agree).
enum KnownDifference: String, Sendable, CaseIterable {
    case userAgent = "user-agent"
    case reasonPhrase = "reason-phrase"
    case expectContinue = "expect-100-continue"
    case multipartBoundary = "multipart-boundary"
    case jsonChecked = "json-checked"
    case retryGivesUp22 = "retry-exhausted-22"
    case decodedSizeDownload = "size-download-decoded"
    case versionProtocols = "version-protocols"
    case resumeRefetchesUnproven = "resume-unproven-refetched"
    case binaryDataRefused = "data-binary-file-refused"

    /// The aspect where it shows.
    var aspect: Aspect {
        switch self {
        case .userAgent, .expectContinue, .multipartBoundary, .decodedSizeDownload, .versionProtocols: .standardOutput
        case .reasonPhrase: .statusLine
        case .jsonChecked, .retryGivesUp22, .binaryDataRefused: .exitCode
        case .resumeRefetchesUnproven: .standardOutput
        }
    }
}

/// One command line run through curl and courier.
struct SideBySideCase: Sendable, CustomStringConvertible {
    /// Where a run's response heads are, for the field comparisons.
    enum Heads: Sendable {
        /// None are compared.
        case none
        /// On standard output before the body (`-i`, `-I`, `-D -`).
        case standardOutput
        /// In a `-D` or `-i -o` file of this name.
        case file(String)
        /// On standard error, as `-v` prints them (`> ` and `< ` lines).
        case verbose
    }

    /// What standard output is, to compare it.
    enum Output: Sendable {
        /// Bytes.
        case bytes
        /// `--version` and `-V`: the first line's text after the platform, and the Protocols and
        /// Features lines.
        case version
    }

    let name: String
    /// The arguments, with `{placeholders}` for the servers' URLs (see ``SideBySideServers``).
    let arguments: [String]
    var heads: Heads = .none
    var output: Output = .bytes
    /// The servers the case needs (placeholders), beyond those every run has.
    var needs: Set<String> = []
    /// Files written into the run's directory before each run: name → contents.
    var setup: [String: Data] = [:]
    /// Files whose modification time is set to the given seconds since 1970 after the setup.
    var modificationTimes: [String: Double] = [:]
    /// Standard input, when the command reads it.
    var standardInput: Data?
    /// Environment variables of both runs (placeholders expanded), over the suite's (which clears the proxy ones).
    var environment: [String: String] = [:]
    /// The differences the case shows on purpose.
    var differences: Set<KnownDifference> = []

    init(_ name: String, _ arguments: [String]) {
        self.name = name
        self.arguments = arguments
    }

    var description: String { "\(name): curl \(arguments.joined(separator: " "))" }

    /// The case with its heads compared from `heads`.
    func heads(_ heads: Heads) -> SideBySideCase {
        var copy = self
        copy.heads = heads
        return copy
    }

    /// The case, expected to show `differences`.
    func differing(_ differences: KnownDifference...) -> SideBySideCase {
        var copy = self
        copy.differences.formUnion(differences)
        return copy
    }

    /// The case with `file` written (as text) in the run's directory first.
    func file(_ name: String, _ text: String, modified: Double? = nil) -> SideBySideCase {
        file(name, Data(text.utf8), modified: modified)
    }

    /// The case with `file` written in the run's directory first.
    func file(_ name: String, _ data: Data, modified: Double? = nil) -> SideBySideCase {
        var copy = self
        copy.setup[name] = data
        if let modified { copy.modificationTimes[name] = modified }
        return copy
    }

    /// The case with `text` on standard input.
    func input(_ text: String) -> SideBySideCase {
        var copy = self
        copy.standardInput = Data(text.utf8)
        return copy
    }

    /// The case run with `variables` in its environment.
    func environment(_ variables: [String: String]) -> SideBySideCase {
        var copy = self
        copy.environment.merge(variables) { $1 }
        return copy
    }

    /// The case needing `placeholder`'s server, skipped (with the rest of the suite's reason) without it.
    func needing(_ placeholder: String) -> SideBySideCase {
        var copy = self
        copy.needs.insert(placeholder)
        return copy
    }

    /// The case whose standard output is compared as `--version`'s.
    func versionOutput() -> SideBySideCase {
        var copy = self
        copy.output = .version
        return copy
    }
}
