import Foundation

/// The servers the side-by-side suite runs against, by placeholder: the interop servers
/// `.ci/start-servers.sh` starts (nginx, httpbin, the SSE server, tinyproxy) and a CourierTestServer
/// of the suite's own (`{local}`: a server that ignores ranges, cookies, a download name).
struct SideBySideServers: Sendable {
    /// Placeholder → value, e.g. `nginx` → `http://127.0.0.1:18180`.
    let values: [String: String]

    /// The name of an environment variable the suite needs and did not find.
    struct Missing: Error {
        let variable: String
    }

    /// The environment's servers, or the name of the first one missing.
    static func fromEnvironment(local: String) -> Result<SideBySideServers, Missing> {
        let environment = ProcessInfo.processInfo.environment
        let required = [
            ("nginx", "COURIER_NGINX_URL"), ("nginxTLS", "COURIER_NGINX_HTTPS_URL"), ("h2c", "COURIER_NGINX_H2C_URL"),
            ("expired", "COURIER_NGINX_EXPIRED_URL"), ("httpbin", "COURIER_HTTPBIN_URL"), ("sse", "COURIER_SSE_URL"),
            ("ca", "COURIER_TEST_CA_FILE"),
        ]
        var values = ["local": local]
        for (placeholder, variable) in required {
            guard let value = environment[variable], !value.isEmpty else { return .failure(Missing(variable: variable)) }
            values[placeholder] = value
        }
        if let proxy = environment["COURIER_CONNECT_PROXY_URL"], !proxy.isEmpty { values["proxy"] = proxy }
        if let url = URL(string: values["httpbin"] ?? ""), let port = url.port { values["httpbinLocalhost"] = "http://localhost:\(port)" }
        return .success(SideBySideServers(values: values))
    }

    /// `text` with every `{placeholder}` replaced.
    func expand(_ text: String) -> String {
        var result = text
        for (placeholder, value) in values { result = result.replacingOccurrences(of: "{\(placeholder)}", with: value) }
        return result
    }

    /// Whether every placeholder `needs` names has a value.
    func has(_ needs: Set<String>) -> Bool {
        needs.allSatisfy { values[$0] != nil }
    }
}

/// One tool's run of a case: what it printed, left behind and exited with.
struct ToolRun: Sendable {
    let status: Int32
    let standardOutput: Data
    let standardError: String
    /// The files in the run's directory afterwards (those of the set-up included), by name.
    let files: [String: Data]
}

/// The values compared for one aspect, after the volatile parts of heads are left out: the
/// `Date` field and nginx's connection counters (`X-Connection`, `X-Connection-Requests`), which
/// differ between any two runs.
struct AspectValues: Sendable {
    var values: [Aspect: String] = [:]

    /// Field names left out of every head comparison (lower case).
    static let volatileFields: Set<String> = ["date", "x-connection", "x-connection-requests"]

    init(_ run: ToolRun, of testCase: SideBySideCase) {
        values[.exitCode] = String(run.status)
        var output = run.standardOutput
        var files = run.files
        var heads: [(status: String, fields: [(String, String)])] = []
        switch testCase.heads {
        case .none:
            break
        case .standardOutput:
            (heads, output) = Self.splitHeads(output)
        case .file(let name):
            if let data = files[name] { (heads, files[name]) = Self.splitHeads(data) }
        case .verbose:
            heads = Self.verboseHeads(run.standardError)
            values[.requestFields] = Self.verboseRequestFields(run.standardError)
        }
        switch testCase.output {
        case .bytes: values[.standardOutput] = String(data: output, encoding: .utf8) ?? "[\(output.count) bytes, hash \(Self.hash(output))]"
        case .version: values[.standardOutput] = Self.versionSummary(output)
        }
        values[.files] = files.keys.sorted().map { "\($0): \(files[$0]?.count ?? 0) bytes, hash \(Self.hash(files[$0] ?? Data()))" }.joined(
            separator: "\n")
        if case .none = testCase.heads { return }
        let kept = heads.map { head in (head.status, head.fields.filter { !Self.volatileFields.contains($0.0.lowercased()) }) }
        values[.statusLine] = kept.map(\.0).joined(separator: "\n")
        values[.fieldSet] = kept.map { $0.1.map { "\($0.0.lowercased()): \($0.1)" }.sorted().joined(separator: "\n") }.joined(separator: "\n---\n")
        values[.fieldNameCase] = kept.map { Set($0.1.map(\.0)).sorted().joined(separator: " ") }.joined(separator: "\n")
        values[.fieldOrder] = kept.map { Self.firstAppearances($0.1.map { $0.0.lowercased() }).joined(separator: " ") }.joined(separator: "\n")
    }

    /// The heads at the start of `data` (each ended by a blank line), and the rest.
    static func splitHeads(_ data: Data) -> ([(status: String, fields: [(String, String)])], Data) {
        var heads: [(status: String, fields: [(String, String)])] = []
        var rest = data[...]
        let end = Data("\r\n\r\n".utf8)
        while rest.starts(with: Data("HTTP/".utf8)), let range = rest.range(of: end) {
            let text = String(decoding: rest[rest.startIndex..<range.lowerBound], as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            heads.append((lines[0], lines.dropFirst().map(field)))
            rest = rest[range.upperBound...]
        }
        return (heads, Data(rest))
    }

    /// The response heads of `-v` (`< ` lines), one per status line.
    static func verboseHeads(_ text: String) -> [(status: String, fields: [(String, String)])] {
        var heads: [(status: String, fields: [(String, String)])] = []
        // curl ends its `-v` head lines with CRLF, one Character in Swift.
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("< ") {
            let content = String(line.dropFirst(2))
            if content.hasPrefix("HTTP/") {
                heads.append((content, []))
            } else if !content.trimmingCharacters(in: .whitespaces).isEmpty, !heads.isEmpty {
                heads[heads.count - 1].fields.append(field(content))
            }
        }
        return heads
    }

    /// `-v`'s request lines (`> `), sorted, blank ones left out.
    static func verboseRequestFields(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map(String.init)
            .filter { $0.hasPrefix("> ") && $0.count > 2 && !$0.dropFirst(2).trimmingCharacters(in: .whitespaces).isEmpty }
            .sorted().joined(separator: "\n")
    }

    /// `--version`'s facts: the first line after the platform, and the Protocols and Features lines.
    static func versionSummary(_ data: Data) -> String {
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        let first = lines.first.flatMap { line in line.range(of: ") ").map { String(line[$0.upperBound...]) } } ?? ""
        return ([first] + lines.filter { $0.hasPrefix("Protocols:") || $0.hasPrefix("Features:") }).joined(separator: "\n")
    }

    private static func field(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    private static func firstAppearances(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }

    /// FNV-1a, 64 bits: enough to tell two outputs apart in a message.
    static func hash(_ data: Data) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(value, radix: 16)
    }
}

extension KnownDifference {
    /// What makes curl's and courier's values of `aspect` comparable despite this difference; nil
    /// when the difference has no such rule for the aspect (it is then only required to show).
    func normalize(_ aspect: Aspect, _ value: String) -> String? {
        func replacing(_ pattern: String, with template: String, in text: String) -> String {
            text.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
        }
        switch (self, aspect) {
        case (.userAgent, .standardOutput), (.userAgent, .requestFields):
            return replacing(#"(curl|courier)/[0-9][0-9.a-z-]*"#, with: "AGENT", in: value)
        case (.reasonPhrase, .statusLine):
            return replacing(#"(?m)^(HTTP/[0-9.]+ [0-9]{3}).*$"#, with: "$1", in: value)
        case (.expectContinue, .standardOutput):
            return replacing(#"(?m)^.*"Expect": "100-continue",\n"#, with: "", in: value)
        case (.multipartBoundary, .standardOutput):
            let boundaries = replacing(#"-{20,}[0-9a-f]{16}|courier\.boundary\.[0-9a-f]+"#, with: "BOUNDARY", in: value)
            return replacing(#"(?m)^.*"Content-Length": "[0-9]+",\n"#, with: "", in: boundaries)
        case (.decodedSizeDownload, .standardOutput), (.resumeRefetchesUnproven, .standardOutput):
            return replacing("[0-9]+", with: "N", in: value)
        case (.versionProtocols, .standardOutput):
            return replacing(#"(?m)^Protocols:.*$"#, with: "", in: value)
        default:
            return nil
        }
    }

    /// The aspects this difference changes.
    var aspects: Set<Aspect> {
        switch self {
        case .jsonChecked, .binaryDataRefused: [.exitCode, .standardOutput]
        case .retryGivesUp22: [.exitCode]
        case .userAgent: [.standardOutput, .requestFields]
        default: [aspect]
        }
    }
}

/// The verdict on one case: the aspects that differ unexpectedly, and the declared differences
/// that did not show.
struct SideBySideVerdict: Sendable {
    var unexpected: [(aspect: Aspect, curl: String, courier: String)] = []
    var missing: [KnownDifference] = []

    /// Whether curl and courier behaved as the case says.
    var holds: Bool { unexpected.isEmpty && missing.isEmpty }

    /// Compares the runs, every aspect, field order and field-name spelling included.
    init(curl: ToolRun, courier: ToolRun, testCase: SideBySideCase) {
        let curlValues = AspectValues(curl, of: testCase).values
        let courierValues = AspectValues(courier, of: testCase).values
        var shown: Set<KnownDifference> = []
        defer {
            missing = testCase.differences.subtracting(shown).sorted { $0.rawValue < $1.rawValue }
        }
        for aspect in Aspect.allCases.sorted() {
            guard let curlValue = curlValues[aspect], let courierValue = courierValues[aspect] else { continue }
            let declared = testCase.differences.filter { $0.aspects.contains(aspect) }
            if declared.isEmpty {
                if curlValue != courierValue { unexpected.append((aspect, curlValue, courierValue)) }
                continue
            }
            // A declared difference must still show (in one of its aspects); where it has a rule,
            // nothing else may differ.
            if curlValue == courierValue { continue }
            shown.formUnion(declared)
            var left = curlValue
            var right = courierValue
            var normalized = false
            for difference in declared.sorted(by: { $0.rawValue < $1.rawValue }) {
                if let a = difference.normalize(aspect, left), let b = difference.normalize(aspect, right) {
                    (left, right) = (a, b)
                    normalized = true
                }
            }
            if normalized, left != right { unexpected.append((aspect, curlValue, courierValue)) }
        }
    }
}
