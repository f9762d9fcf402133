@testable import courier
import Foundation
import Testing

/// The argument parser and option validation, as pure functions.
@Suite struct ParserTests {
    private func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError) -> FetchOptions {
        try FetchOptions.parse(arguments, environment: environment)
    }

    @Test func shortLongAttachedAndGroupedForms() throws {
        let options = try parse(["-vC", "-oout.bin", "--timeout=1.5", "--header", "A: 1", "-HB:2", "--", "http://h/x"])
        #expect(options.verbose && options.resumable)
        #expect(options.output == "out.bin")
        #expect(options.timeout == 1.5)
        #expect(options.headers == [HeaderField(name: "A", value: "1"), HeaderField(name: "B", value: "2")])
        #expect(options.url.absoluteString == "http://h/x")
        #expect(options.method == "GET")
    }

    @Test func methodDefaultsAndPositionalMethod() throws {
        #expect(try parse(["-d", "a=1", "http://h/"]).method == "POST")
        #expect(try parse(["put", "http://h/"]).method == "PUT")
        #expect(try parse(["-X", "DELETE", "http://h/"]).method == "DELETE")
        #expect(try parse(["PATCH", "-X", "patch", "http://h/"]).method == "PATCH")
        #expect(throws: UsageError.self) { try parse(["GET", "-X", "POST", "http://h/"]) }
    }

    @Test func urlWithoutSchemeGetsHTTP() throws {
        #expect(try parse(["localhost:8080/a?b=1"]).url.absoluteString == "http://localhost:8080/a?b=1")
        #expect(throws: UsageError.self) { try parse(["ftp://h/x"]) }
        #expect(throws: UsageError.self) { try parse(["http://"]) }
    }

    @Test func bodies() throws {
        #expect(try parse(["--data-binary", "@big.bin", "http://h/"]).body == .file(path: "big.bin"))
        let readData: @Sendable (String) throws -> Data = { _ in Data("a=1\r\nb=2\n".utf8) }
        #expect(try FetchOptions.parse(["-d", "@f.txt", "http://h/"], environment: [:], readData: readData).body == .data("a=1b=2"))
        #expect(try parse(["-T", "up.bin", "http://h/dir/"]).url.absoluteString == "http://h/dir/up.bin")
        #expect(try parse(["-T", "up.bin", "http://h/dir/"]).method == "PUT")
        #expect(try parse(["-d", "x=1", "http://h/"]).body == .data("x=1"))
        #expect(try parse(["--json", #"{"a":[1,2]}"#, "http://h/"]).body == .json(#"{"a":[1,2]}"#))
        let form = try parse(["-F", "a=1", "-F", "f=@p.png;type=image/png", "http://h/"]).body
        #expect(
            form
                == .form([
                    FormField(name: "a", value: .text("1")),
                    FormField(name: "f", value: .file(path: "p.png", mimeType: "image/png")),
                ]))
    }

    @Test(arguments: [
        (["--bogus", "http://h/"], "unknown option '--bogus'"),
        (["-Y", "http://h/"], "unknown option '-Y'"),
        (["--verbos", "http://h/"], "did you mean '--verbose'"),
        ([String](), "missing URL"),
        (["-v"], "missing URL"),
        (["-H", "NoColon", "http://h/"], "bad header 'NoColon'"),
        (["-H", "Bad Name: x", "http://h/"], "bad header name"),
        (["-d", "a", "--json", "{}", "http://h/"], "-d and --json cannot be used together"),
        (["-d", "a", "-F", "a=b", "http://h/"], "-d and -F cannot be used together"),
        (["--json", "{nope", "http://h/"], "--json: not valid JSON"),
        (["--timeout", "0", "http://h/"], "--timeout needs a positive number"),
        (["--timeout", "soon", "http://h/"], "--timeout needs a positive number"),
        (["--max-redirects", "-1", "http://h/"], "--max-redirs needs a whole number"),
        (["--transport", "carrier-pigeon", "http://h/"], "--transport must be curl or urlsession"),
        (["-C", "http://h/"], "-C/--continue-at needs -o FILE"),
        (["--store", "/tmp/s", "-o", "x", "http://h/"], "--store only applies"),
        (["-o"], "option -o/--output needs a value"),
        (["-o", "a", "-o", "b", "http://h/"], "2 -o/-O options for 1 URL"),
        (["--verbose=yes", "http://h/"], "takes no value"),
        (["http://a/", "ftp://b/"], "unexpected argument 'ftp://b/'"),
        (["GET", "http://a/", "extra"], "unexpected argument 'extra'"),
        (["-F", "=x", "http://h/"], "bad form field"),
        (["-d", "@", "http://h/"], "-d @FILE needs a file name"),
    ])
    func usageErrors(arguments: [String], message: String) {
        do {
            let options = try parse(arguments)
            Issue.record("expected a usage error containing \"\(message)\", got \(options)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func outputDashMeansStandardOutput() throws {
        #expect(try parse(["-o", "-", "http://h/"]).output == nil)
        #expect(throws: UsageError.self) { try parse(["-C", "-o", "-", "http://h/"]) }
    }

    @Test func storeFromEnvironmentOrOption() throws {
        let fromEnvironment = try parse(["-C", "-o", "x", "http://h/"], environment: ["COURIER_DOWNLOAD_STORE": "/tmp/env-store"])
        #expect(fromEnvironment.storeDirectory == "/tmp/env-store")
        let fromOption = try parse(["-C", "-o", "x", "--store", "/tmp/opt", "http://h/"], environment: ["COURIER_DOWNLOAD_STORE": "/tmp/env"])
        #expect(fromOption.storeDirectory == "/tmp/opt")
        #expect(try parse(["-o", "x", "http://h/"]).storeDirectory == nil)
    }

    @Test func headerValuesAreTrimmedAndMayBeEmpty() throws {
        #expect(try HeaderField.parse("X-Trace:   abc  ") == HeaderField(name: "X-Trace", value: "abc"))
        #expect(try HeaderField.parse("X-Empty;") == HeaderField(name: "X-Empty", value: ""))
        #expect(try HeaderField.parse("X-Gone:").removes, "curl's 'Name:' removes the header")
        #expect(try !HeaderField.parse("X-Empty;").removes)
        #expect(try HeaderField.parse("Authorization: Bearer a:b") == HeaderField(name: "Authorization", value: "Bearer a:b"))
    }

    @Test func editDistance() {
        #expect(ArgumentParser.editDistance("verbos", "verbose") == 1)
        #expect(ArgumentParser.editDistance("", "abc") == 3)
        #expect(ArgumentParser.editDistance("fail", "fail") == 0)
    }
    @Test func continueTakesAnOptionalDashAndCurlSpellings() throws {
        #expect(try parse(["-C", "-", "-o", "x", "http://h/"]).resumable)
        #expect(try parse(["-C-", "-o", "x", "http://h/"]).resumable)
        #expect(try parse(["--continue-at", "-", "-o", "x", "http://h/"]).resumable)
        #expect(try parse(["--continue", "-o", "x", "http://h/"]).resumable)
        #expect(try parse(["-sSfC", "-o", "x", "http://h/"]).silent)
        #expect(try parse(["-C", "100", "-o", "x", "http://h/"]).resumeOffset == 100, "curl's -C OFFSET")
        #expect(try !parse(["-C", "100", "-o", "x", "http://h/"]).resumable)
        #expect(try parse(["--max-redirs", "3", "http://h/"]).maxRedirects == 3)
        #expect(try parse(["--max-redirects", "4", "http://h/"]).maxRedirects == 4)
    }

    @Test func schemesAreCheckedBeforeAHostIsAssumed() throws {
        #expect(try parse(["localhost:8080/x"]).url.absoluteString == "http://localhost:8080/x")
        #expect(try parse(["127.0.0.1:8080/x"]).url.absoluteString == "http://127.0.0.1:8080/x")
        #expect(try parse(["HTTPS://h/x"]).url.host == "h")
        for typo in ["htp://h/x", "htps:/h/x", "ftp://h/x", "file:///etc/passwd"] {
            do {
                _ = try parse([typo])
                Issue.record("\(typo) was accepted")
            } catch {
                #expect(error.exitCode == .unsupportedProtocol, "\(typo): \(error)")
                #expect(error.message.hasPrefix("Protocol \""), "\(typo): \(error)")
            }
        }
    }

    @Test func requestItems() throws {
        #expect(try RequestItem.parse("a=b:c") == .field(name: "a", value: "b:c"))
        #expect(try RequestItem.parse("X-A:b=c") == .header(HeaderField(name: "X-A", value: "b=c")))
        #expect(try RequestItem.parse("n:=[1,2]") == .rawField(name: "n", json: "[1,2]"))
        #expect(try RequestItem.parse("q==a=b") == .query(name: "q", value: "a=b"))
        #expect(try RequestItem.parse("empty=") == .field(name: "empty", value: ""))
        #expect(throws: UsageError.self) { try RequestItem.parse("plain") }
        #expect(throws: UsageError.self) { try RequestItem.parse("http://other/") }
        #expect(
            RequestItem.jsonObject([.field(name: "s", value: "a\"b\n"), .rawField(name: "n", json: "1"), .field(name: "s", value: "c")])
                == #"{"s":"c","n":1}"#)
        #expect(RequestItem.quoted("a\"\\\n\u{1}") == #""a\"\\\n\u0001""#)
    }

    @Test func writeOutRendersCurlsVariables() {
        var values = WriteOut.Values(urlEffective: "http://h/new")
        values.statusCode = 204
        values.sizeDownload = 12
        values.timeTotal = 0.5
        values.redirects = 2
        values.contentType = "text/plain"
        values.httpVersion = WriteOut.curlVersion("HTTP/1.1")
        values.remoteAddress = "[::1]:8080"
        let rendered = WriteOut(
            "%{http_code} %{size_download} %{time_total} %{url_effective} %{content_type} %{num_redirects} "
                + "%{http_version} %{remote_ip} 100%% %{nope}\\n\\t"
        ).render(values)
        #expect(rendered.text == "204 12 0.500000 http://h/new text/plain 2 1.1 ::1 100% \n\t")
        #expect(rendered.unknown == ["nope"])
        #expect(WriteOut("%{http_code}").render(WriteOut.Values(urlEffective: "x")).text == "000")
    }
}
