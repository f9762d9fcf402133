import CourierSupport
@testable import courier
import Courier
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The curl syntaxes courier reads, as pure functions: config files, netrc, Netscape cookie
/// files and Set-Cookie, the data options, URLs paired with outputs, protocol lists, libcurl's
/// `-v` lines and the new `-w` variables.
@Suite struct CurlSyntaxTests {
    private func parse(_ arguments: [String], files: [String: String] = [:]) throws(UsageError) -> FetchOptions {
        let readFile: @Sendable (String) throws -> String = { path in
            guard let text = files[path] else { throw CocoaError(.fileNoSuchFile) }
            return text
        }
        return try FetchOptions.parse(arguments, environment: ["HOME": "/home/ada"], readFile: readFile, readData: { Data(try readFile($0).utf8) })
    }

    @Test func configFilesReadLikeCurls() throws {
        let text = """
            # a comment
              silent
            --header "X-A: a \\"quoted\\" value"
            user-agent = "agent with spaces"
            url: http://h/one
            -o out.bin
            continue-at = -
            write-out="%{http_code}\\n"
            """
        let arguments = try ConfigFile.arguments(text, name: "c.cfg", options: FetchOptions.options)
        #expect(
            arguments == [
                "--silent", "--header", #"X-A: a "quoted" value"#, "--user-agent", "agent with spaces", "--url", "http://h/one",
                "-o", "out.bin", "--continue-at=-", "--write-out", "%{http_code}\n",
            ])
        let options = try parse(["-K", "c.cfg"], files: ["c.cfg": text])
        #expect(options.silent && options.resumable)
        #expect(options.url.absoluteString == "http://h/one")
        #expect(options.userAgent == "agent with spaces")
        #expect(options.output == "out.bin")
    }

    @Test(arguments: [
        ("url = \"http://h/\nsilent", "c.cfg:1: a quoted value has no closing"),
        ("output", "c.cfg:1: option -o/--output needs a value"),
        ("bogus-option x", "unknown option '--bogus-option'"),
    ])
    func configFileMistakesAreNamed(text: String, message: String) {
        do {
            let options = try parse(["-K", "c.cfg", "http://h/"], files: ["c.cfg": text])
            Issue.record("expected \(message), got \(options)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func aConfigFileThatReadsItselfStops() {
        #expect(throws: UsageError.self) { try parse(["-K", "loop.cfg", "http://h/"], files: ["loop.cfg": "config = loop.cfg"]) }
    }

    @Test func netrcEntries() throws {
        let netrc = Netrc(
            """
            machine api.example.com
              login ada password "s3 cret"
            macdef init
            cd /pub
            ls

            machine other.example.com login bob password pw
            default login anonymous password guest
            """)
        #expect(netrc.entry(for: "API.example.com") == Netrc.Entry(machine: "api.example.com", login: "ada", password: "s3 cret"))
        #expect(netrc.entry(for: "other.example.com")?.login == "bob", "macdef's lines are skipped up to the blank line")
        #expect(netrc.entry(for: "elsewhere")?.login == "anonymous")
        let options = try parse(["-n", "http://api.example.com/"], files: ["/home/ada/.netrc": "machine api.example.com login ada password pw"])
        #expect(options.headers.contains(HeaderField(name: "Authorization", value: "Basic " + Data("ada:pw".utf8).base64EncodedString())))
        let none = try parse(["--netrc-optional", "http://api.example.com/"])
        #expect(!none.headers.contains { $0.name == "Authorization" }, "no file, no credentials, no error")
        #expect(try parse(["-u", "ada", "http://h/"]).passwordPromptUser == "ada")
    }

    @Test func cookieFilesAndSetCookie() throws {
        var jar = CookieJar()
        jar.load(
            netscape: """
                # Netscape HTTP Cookie File
                .example.com\tTRUE\t/\tFALSE\t0\twide\tw
                #HttpOnly_api.example.com\tFALSE\t/v2\tTRUE\t4102444800\tdeep\td
                malformed line
                """)
        #expect(jar.header(for: URL(string: "http://www.example.com/")!) == "wide=w")
        #expect(jar.header(for: URL(string: "http://api.example.com/v2/x")!) == "wide=w", "Secure needs https")
        #expect(jar.header(for: URL(string: "https://api.example.com/v2/x")!) == "deep=d; wide=w", "the longer path first")
        #expect(jar.header(for: URL(string: "https://api.example.com/v20")!) == "wide=w", "/v2 is not a prefix of /v20's path")

        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let url = URL(string: "http://api.example.com/v2/items")!
        jar.receive(
            ["wide=changed; Domain=example.com; Path=/", "new=1; Max-Age=60", "gone=x; Max-Age=0", "evil=1; Domain=other.com"], from: url, now: now)
        let text = jar.netscapeText(now: now)
        #expect(text.hasPrefix(CookieJar.fileHeader))
        #expect(text.contains("api.example.com\tFALSE\t/v2\tFALSE\t1700000060\tnew\t1\n"), "host-only, the request's directory: \(text)")
        #expect(text.contains(".example.com\tTRUE\t/\tFALSE\t0\twide\tchanged\n"), "replaced: \(text)")
        #expect(!text.contains("gone") && !text.contains("evil"), "\(text)")
        #expect(text.contains("#HttpOnly_api.example.com\tFALSE\t/v2\tTRUE\t4102444800\tdeep\td\n"))
    }

    @Test func joinedSetCookieValuesSplitBackOutsideDates() {
        #expect(
            CookieJar.splitJoined("a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/, b=2, c=3; HttpOnly")
                == ["a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/", "b=2", "c=3; HttpOnly"])
        #expect(CookieDate.parse("Wed, 09 Jun 2100 10:18:14 GMT") == Date(timeIntervalSince1970: 4_116_219_494))
        #expect(CookieDate.parse("Thu, 01-Jan-70 00:00:01 GMT") == Date(timeIntervalSince1970: 1))
        #expect(CookieDate.parse("not a date") == nil)
    }

    @Test func dataOptionsJoinAsCurlsDo() throws {
        let files = ["form.txt": "a=1\r\nb=2\n", "note.txt": "x y&z"]
        #expect(try parse(["-d", "a=1", "--data-raw", "@raw", "-d", "@form.txt", "http://h/"], files: files).body == .data("a=1&@raw&a=1b=2"))
        #expect(
            try parse(["--data-urlencode", "q=a b&c", "--data-urlencode", "n@note.txt", "--data-urlencode", "=~ok", "http://h/"], files: files).body
                == .data("q=a+b%26c&n=x+y%26z&~ok"))
        let get = try parse(["-G", "-d", "q=1", "--data-urlencode", "r=a b", "http://h/p?x=0"])
        #expect(get.url.absoluteString == "http://h/p?x=0&q=1&r=a+b")
        #expect(get.method == "GET" && get.body == nil)
        #expect(try parse(["--json", #"{"a":"#, "--json", "1}", "http://h/"]).body == .json(#"{"a":1}"#))
        #expect(try parse(["-T", "-", "http://h/x"]).body == .standardInput)
        #expect(try parse(["-T", "-", "http://h/x"]).removedHeaders == ["Content-Type"], "curl sends -T's body unlabelled")
    }

    @Test func urlsPairWithOutputsInOrder() throws {
        let options = try parse(["-O", "http://h/a.bin", "-o", "-", "http://h/b", "--output-dir", "dl", "http://h/c.txt", "--remote-name-all"])
        #expect(options.targets.map(\.output) == ["dl/a.bin", nil, "dl/c.txt"])
        #expect(options.targets.map(\.url.absoluteString) == ["http://h/a.bin", "http://h/b", "http://h/c.txt"])
        let extra = try parse(["GET", "http://h/1", "X-A:1", "https://h/2", "--url", "http://h/3"])
        #expect(extra.targets.map(\.url.absoluteString) == ["http://h/1", "https://h/2", "http://h/3"])
        #expect(extra.headers == [HeaderField(name: "X-A", value: "1")])
        #expect(throws: UsageError.self) { try parse(["-O", "http://h/"]) }
        #expect(throws: UsageError.self) { try parse(["-J", "-o", "x", "http://h/a"]) }
    }

    @Test func protocolListsAndSizes() throws {
        #expect(try ProtocolList.parse("=https", option: "--proto") == ["https"])
        #expect(try ProtocolList.parse("-all,+http", option: "--proto") == ["http"])
        #expect(try ProtocolList.parse("-http", option: "--proto") == ["https"])
        #expect(try FetchOptions.byteCount("100k", option: "x") == 102_400)
        #expect(try FetchOptions.byteCount("1.5M", option: "x") == 1_572_864)
        #expect(throws: UsageError.self) { try FetchOptions.byteCount("fast", option: "x") }
        #expect(try parse(["--limit-rate", "2G", "http://h/"]).limitRate == 2 << 30)
        #expect(throws: UsageError.self) { try parse(["--transport", "urlsession", "-x", "http://p:3128", "http://h/"]) }
    }

    @Test func libcurlsVerboseLinesAsCurlPrintsThem() {
        let url = URL(string: "http://h/")!
        #expect(CurlDebugPrinter.lines(CurlDebugEvent(kind: .text, text: "  Trying 127.0.0.1:80...\n", url: url)) == ["*   Trying 127.0.0.1:80..."])
        #expect(
            CurlDebugPrinter.lines(CurlDebugEvent(kind: .headerOut, text: "GET / HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n", url: url))
                == ["> GET / HTTP/1.1", "> Host: h", "> Accept: */*", ">"])
        #expect(CurlDebugPrinter.lines(CurlDebugEvent(kind: .headerIn, text: "HTTP/1.1 200 OK\r\n", url: url)) == ["< HTTP/1.1 200 OK"])
        #expect(CurlDebugPrinter.lines(CurlDebugEvent(kind: .headerIn, text: "\r\n", url: url)) == ["<"])
    }

    @Test func newWriteOutVariables() throws {
        var values = WriteOut.Values(urlEffective: "https://h/b")
        values.statusCode = 301
        values.method = "HEAD"
        values.remoteAddress = "[::1]:8443"
        values.urlNumber = 2
        values.response = HTTPURLResponse(
            url: URL(string: "https://h/a")!, statusCode: 301, httpVersion: "HTTP/1.1", headerFields: ["Location": "/c", "ETag": "\"v\""])
        let rendered = WriteOut("%{method} %{scheme} %{remote_port} %{urlnum} %{redirect_url} %header{etag}%{stderr}err%{stdout}!").render(values)
        #expect(rendered.text == #"HEAD HTTPS 8443 2 https://h/c "v"!"#)
        #expect(rendered.pieces.map(\.stream) == [.standardOutput, .standardError, .standardOutput])
        let file = try parse(["-w", "@fmt", "http://h/"], files: ["fmt": "%{http_code}\n%{size_download}\n"])
        #expect(file.writeOut == WriteOut("%{http_code}%{size_download}"), "curl reads the lines of the file without their line ends")
    }

    @Test func everyOptionIsInTheHelpTheCompletionScriptsAndTheCurlPage() throws {
        let page = try String(contentsOf: CurlSideBySideTests.differencesDocument, encoding: .utf8)
        let scripts = CompletionScript.Shell.allCases.map { CompletionScript.script(for: $0) }
        for option in CompletionScript.options {
            for name in [option.long] + option.aliases {
                #expect(
                    ["`", " ", "/", "="].contains { page.contains("`--\(name)\($0)") } || page.contains("(`--\(name)`"),
                    "docs/curl-compatibility.md names --\(name)")
                for script in scripts { #expect(script.contains("\(name)"), "a completion script lacks --\(name)") }
            }
            guard option.id != "version", option.id != "generate-completion-script" else { continue }
            #expect(Help.fetch.contains("--\(option.long)") || Help.webSocket.contains("--\(option.long)"), "help names --\(option.long)")
        }
    }
}
