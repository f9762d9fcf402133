import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// courier as a drop-in for curl: every command line of ``SideBySideCases`` runs through the curl
/// CLI and through courier against the same servers, and their exit statuses, standard output,
/// the files they leave and (for `-i`, `-I`, `-D`, `-v`) the heads they print are compared. Every
/// difference must be one the case declares, from the table in `docs/curl-compatibility.md`,
/// and every declared difference must still show: a new difference fails, and so does one that
/// went away without the table saying so.
///
/// Needs the curl CLI and the interop servers (`.ci/start-servers.sh`, as `.ci/run` starts them);
/// without them it prints one `SKIPPED` line.
@Suite struct CurlSideBySideTests {
    /// How many cases run at once.
    static let concurrency = 4

    @Test func curlAndCourierAgreeExceptWhereTheTableSaysSo() async throws {
        guard let curl = Self.curlExecutable else {
            SkipNotice.skipped(
                "the curl side-by-side suite", because: "the curl command is not installed",
                run: "apt-get install curl (as .ci/run does), then swift test")
            return
        }
        let local = try TestServer()
        defer { expectClean(local.shutdown()) }
        Self.routeLocal(local)
        let servers: SideBySideServers
        switch SideBySideServers.fromEnvironment(local: local.url("").absoluteString.trimmingSuffix("/")) {
        case .success(let found): servers = found
        case .failure(let missing):
            SkipNotice.skipped("the curl side-by-side suite", because: "\(missing.variable) is not set", run: InteropEnvironment.command)
            return
        }
        let random = try await Self.fetch(servers.expand("{nginx}/random-1m.bin"))
        let cases = SideBySideCases.all(randomFilePrefix: random.body.prefix(1000)).filter { servers.has($0.needs) }
        #expect(cases.count >= 60, "the issue asks for at least 60 command lines: \(cases.count)")
        let root = try TemporaryDirectory("side-by-side")
        defer { root.remove() }

        let verdicts = await withTaskGroup(of: (SideBySideCase, Result<SideBySideVerdict, any Error>).self) { group in
            var results: [(SideBySideCase, Result<SideBySideVerdict, any Error>)] = []
            var next = 0
            func startNext() {
                guard next < cases.count else { return }
                let (index, testCase) = (next, cases[next])
                next += 1
                group.addTask {
                    do {
                        let directory = root.path("case-\(index)")
                        let curlRun = try await Self.run(
                            testCase, tool: curl, in: directory.appendingPathComponent("curl"), servers: servers, lastModified: random.lastModified)
                        let courierRun = try await Self.run(
                            testCase, tool: nil, in: directory.appendingPathComponent("courier"), servers: servers, lastModified: random.lastModified)
                        return (
                            testCase,
                            .success(
                                SideBySideVerdict(curl: curlRun, courier: courierRun, testCase: testCase)
                            )
                        )
                    } catch {
                        return (testCase, .failure(error))
                    }
                }
            }
            for _ in 0..<Self.concurrency { startNext() }
            while let result = await group.next() {
                results.append(result)
                startNext()
            }
            return results
        }
        for (testCase, result) in verdicts {
            switch result {
            case .failure(let error):
                Issue.record("\(testCase): \(error)")
            case .success(let verdict):
                for difference in verdict.unexpected {
                    Issue.record(
                        "\(testCase)\nan undeclared difference in \(difference.aspect.rawValue):\n--- curl ---\n\(difference.curl.prefix(3000))\n--- courier ---\n\(difference.courier.prefix(3000))"
                    )
                }
                for difference in verdict.missing {
                    Issue.record("\(testCase)\nthe declared difference '\(difference.rawValue)' did not show: update the case and the table")
                }
            }
        }
        TestEnvironment.note(
            "[side-by-side] \(cases.count) command lines through curl and courier; \(verdicts.filter { (try? $0.1.get())?.holds == true }.count) as documented"
        )
    }

    @Test func theDifferencesTableListsExactlyTheDifferencesTheCasesShow() throws {
        let table = try String(contentsOf: Self.differencesDocument, encoding: .utf8)
        let rows = table.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<end])
        }
        #expect(Set(rows) == Set(KnownDifference.allCases.map(\.rawValue)), "docs/curl-compatibility.md's table against KnownDifference")
        #expect(rows.count == Set(rows).count, "one row per difference")
        let declared = Set(SideBySideCases.all(randomFilePrefix: Data()).flatMap(\.differences))
        #expect(
            declared == Set(KnownDifference.allCases),
            "every difference of the table is shown by a case: \(Set(KnownDifference.allCases).subtracting(declared))")
    }

    // MARK: Running

    /// The curl CLI on the `PATH`, if there is one.
    static let curlExecutable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("curl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// `docs/curl-compatibility.md`, from this file's place in the repository.
    static var differencesDocument: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/curl-compatibility.md")
    }

    /// Runs `testCase` with curl (`tool`) or courier (nil) in a fresh `directory`, after its set-up.
    static func run(
        _ testCase: SideBySideCase, tool: URL?, in directory: URL, servers: SideBySideServers, lastModified: Date?
    ) async throws -> ToolRun {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, data) in testCase.setup {
            let file = directory.appendingPathComponent(name)
            try expanded(data, servers).write(to: file)
            if let seconds = testCase.modificationTimes[name] {
                let date = seconds < 0 ? (lastModified ?? Date()) : Date(timeIntervalSince1970: seconds)
                try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: file.path)
            }
        }
        var stdin = ChildProcess.Stream.null
        if let input = testCase.standardInput {
            let file = directory.appendingPathExtension("stdin")
            try expanded(input, servers).write(to: file)
            stdin = .file(file.path)
        }
        var environment = [
            "HOME": directory.path, "CURL_HOME": directory.path, "http_proxy": "", "https_proxy": "", "all_proxy": "",
            "HTTPS_PROXY": "", "ALL_PROXY": "", "no_proxy": "", "NO_PROXY": "",
        ]
        for (name, value) in testCase.environment { environment[name] = servers.expand(value) }
        let arguments = testCase.arguments.map(servers.expand)
        let process =
            if let tool {
                try CLIProcess(executable: tool, arguments, environment: environment, currentDirectory: directory, stdin: stdin)
            } else {
                try CLIProcess(arguments, environment: environment, currentDirectory: directory, stdin: stdin)
            }
        let result = try await process.finish(timeout: .seconds(60))
        return ToolRun(status: result.status, standardOutput: result.stdout, standardError: result.stderrText, files: try Self.files(in: directory))
    }

    /// `data` with its placeholders replaced when it is text that has some; as it is otherwise.
    static func expanded(_ data: Data, _ servers: SideBySideServers) -> Data {
        guard let text = String(data: data, encoding: .utf8), text.contains("{") else { return data }
        return Data(servers.expand(text).utf8)
    }

    /// Every regular file under `directory`, by relative path.
    static func files(in directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let base = directory.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return files }
        for case let relative as String in walker {
            let path = base + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    /// A URL's body and `Last-Modified`, fetched with Courier.
    static func fetch(_ url: String) async throws -> (body: Data, lastModified: Date?) {
        let session = Session()
        let response = await session.request(url).serializingData().response
        let body = try response.result.get()
        let lastModified = response.response?.value(forHTTPHeaderField: "Last-Modified").flatMap { text -> Date? in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter.date(from: text)
        }
        return (body, lastModified)
    }

    /// The suite's own routes: a download that ignores ranges, cookies with attributes, a file
    /// named by `Content-Disposition`.
    static func routeLocal(_ server: TestServer) {
        server.route("/norange.bin", Resource(pattern: 200_000, seed: 42, ignoresRange: true))
        server.route("/cookies") { _ in
            .text("cookies set")
                .header("Set-Cookie", "plain=1; Path=/")
                .header("Set-Cookie", "scoped=2; Path=/cookies")
                .header("Set-Cookie", "dated=3; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/")
                .header("Set-Cookie", "secret=4; Secure; HttpOnly; Path=/")
        }
        server.route("/download") { _ in
            .text("named by the server\n").header("Content-Disposition", #"attachment; filename="report.txt""#)
        }
    }
}

extension String {
    /// The string without `suffix` at its end, if it ends with it.
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
