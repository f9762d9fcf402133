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
        #expect(try parse(["-d", "@big.bin", "http://h/"]).body == .file(path: "big.bin"))
        #expect(try parse(["-d", "x=1", "http://h/"]).body == .data("x=1"))
        #expect(try parse(["--json", #"{"a":[1,2]}"#, "http://h/"]).body == .json(#"{"a":[1,2]}"#))
        let form = try parse(["-F", "a=1", "-F", "f=@p.png;type=image/png", "http://h/"]).body
        #expect(form == .form([FormField(name: "a", value: .text("1")),
                               FormField(name: "f", value: .file(path: "p.png", mimeType: "image/png"))]))
    }

    @Test(arguments: [
        (["--bogus", "http://h/"], "unknown option '--bogus'"),
        (["-Z", "http://h/"], "unknown option '-Z'"),
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
        (["-o", "a", "-o", "b", "http://h/"], "given more than once"),
        (["--verbose=yes", "http://h/"], "takes no value"),
        (["http://a/", "http://b/"], "unexpected argument 'http://b/'"),
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
        #expect(try HeaderField.parse("X-Empty:") == HeaderField(name: "X-Empty", value: ""))
        #expect(try HeaderField.parse("Authorization: Bearer a:b") == HeaderField(name: "Authorization", value: "Bearer a:b"))
    }

    @Test func editDistance() {
        #expect(ArgumentParser.editDistance("verbos", "verbose") == 1)
        #expect(ArgumentParser.editDistance("", "abc") == 3)
        #expect(ArgumentParser.editDistance("fail", "fail") == 0)
    }
}
