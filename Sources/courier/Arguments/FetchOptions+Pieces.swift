import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchOptions {
    /// `[METHOD] URL [URL...] [ITEM...]`: the method when the first of two or more arguments looks
    /// like one, the URLs (the first argument after it, then any with an http:// or https:// scheme,
    /// then `--url`'s), and the HTTPie-style items.
    static func splitPositionals(
        _ positionals: [String], extraURLs: [String] = []
    ) throws(UsageError) -> (method: String?, urls: [String], items: [String]) {
        var rest = positionals[...]
        var method: String?
        if positionals.count >= 2, let first = rest.first, looksLikeMethod(first) {
            method = first
            rest = rest.dropFirst()
        }
        var urls: [String] = []
        var items: [String] = []
        if let first = rest.first {
            urls.append(first)
            rest = rest.dropFirst()
        }
        for argument in rest {
            if let scheme = explicitScheme(argument), ["http", "https"].contains(scheme.lowercased()) {
                urls.append(argument)
            } else {
                items.append(argument)
            }
        }
        urls += extraURLs
        guard !urls.isEmpty else { throw UsageError("missing URL") }
        return (method, urls, items)
    }

    /// Whether `text` can be a method: a token of letters (and `-`/`_`), such as `GET` or `PROPFIND`.
    static func looksLikeMethod(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || scalar == "-" || scalar == "_"
            }
    }

    /// The method from the positional argument and `-X`, which must agree; `HEAD` with `-I`, `PUT`
    /// with `-T`, `GET` with `-G`, `POST` when there is a body and no method was given, else `GET`.
    static func method(
        positional: String?, option: String?, hasBody: Bool, head: Bool = false, upload: Bool = false, get: Bool = false
    ) throws(UsageError) -> String {
        if let option, !Token.isToken(option) {
            throw UsageError("-X: '\(option)' is not a valid method")
        }
        let given = [positional, option].compactMap { $0?.uppercased() }
        if given.count == 2, given[0] != given[1] {
            throw UsageError("two different methods given: '\(given[0])' and '\(given[1])'")
        }
        if head {
            if let other = given.first, other != "HEAD" { throw UsageError("-I/--head sends HEAD, but the method given is '\(other)'") }
            return "HEAD"
        }
        if let chosen = given.first { return chosen }
        if upload { return "PUT" }
        if get { return "GET" }
        return hasBody ? "POST" : "GET"
    }

    /// `-u USER:PASSWORD` as an `Authorization: Basic` header, unless `headers` has one already.
    static func addBasicAuthorization(user: String?, to headers: inout [HeaderField]) throws(UsageError) {
        guard let user else { return }
        guard let colon = user.firstIndex(of: ":") else {
            throw UsageError("-u needs USER:PASSWORD here")
        }
        guard !headers.contains(where: { $0.name.lowercased() == "authorization" }) else { return }
        let header = HTTPHeader.authorization(username: String(user[..<colon]), password: String(user[user.index(after: colon)...]))
        headers.append(HeaderField(name: header.name, value: header.value))
    }

    /// The `-H` headers, `-H @FILE` read line by line (blank lines and `#` comments skipped).
    static func headers(from parsed: ParsedArguments, readFile: (String) throws -> String) throws(UsageError) -> [HeaderField] {
        var headers: [HeaderField] = []
        for value in parsed.values("header") {
            guard value.hasPrefix("@") else {
                headers.append(try HeaderField.parse(value))
                continue
            }
            let path = String(value.dropFirst())
            guard !path.isEmpty else { throw UsageError("-H @FILE needs a file name after '@'") }
            let text: String
            do {
                text = try readFile(path)
            } catch {
                throw UsageError(
                    "Failed to read the header file \(path): \(FileChecks.readableFileProblem(path) ?? "\(error)")",
                    exitCode: .readError)
            }
            for line in text.split(whereSeparator: \.isNewline) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                headers.append(try HeaderField.parse(trimmed))
            }
        }
        return headers
    }

    /// The body from the data options, `--json`, `-F`, `-T` and `name=value` items, of which at most
    /// one kind may be given.
    static func body(
        from parsed: ParsedArguments, items: [RequestItem] = [], readData: (String) throws -> Data = readDataFromDisk
    ) throws(UsageError) -> RequestBody? {
        let pieces = RequestData.pieces(from: parsed)
        let json = parsed.values("json")
        let form = parsed.values("form")
        let upload = parsed.value("upload-file")
        let fields = items.filter(\.isJSONField)
        let given = [
            pieces.isEmpty ? nil : "-d", json.isEmpty ? nil : "--json", form.isEmpty ? nil : "-F",
            upload == nil ? nil : "-T", fields.isEmpty ? nil : "NAME=VALUE items",
        ].compactMap { $0 }
        if given.count > 1 {
            throw UsageError("\(given[0]) and \(given[1]) cannot be used together (a request has one body)")
        }
        if !pieces.isEmpty {
            return try RequestData.body(pieces, readData: readData)
        }
        if !json.isEmpty {
            let text = try RequestData.json(json, readData: readData)
            do {
                _ = try JSON(parsing: text)
            } catch {
                throw UsageError("--json: not valid JSON: \(error.message)")
            }
            return .json(text)
        }
        if !form.isEmpty {
            return .form(try form.map { (text) throws(UsageError) in try FormField.parse(text) })
        }
        if let upload {
            guard !upload.isEmpty else { throw UsageError("-T/--upload-file needs a file name ('-' for stdin)") }
            return upload == "-" ? .standardInput : .upload(path: upload)
        }
        if !fields.isEmpty {
            return .json(RequestItem.jsonObject(fields))
        }
        return nil
    }

    /// `-G`: `url` with the data of `body` added to its query.
    static func withQuery(_ body: RequestBody?, added url: URL) throws(UsageError) -> URL {
        guard let body else { return url }
        let query: String
        switch body {
        case .data(let text): query = text
        case .bytes(let bytes): query = String(decoding: bytes, as: UTF8.self)
        default: throw UsageError("-G/--get sends the -d data in the URL; \(body.optionName) has no place there")
        }
        guard !query.isEmpty else { return url }
        let text = url.absoluteString
        let base = text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
        let joined = base + (url.query == nil ? "?" : "&") + query
        guard let result = URL(string: joined) else {
            throw UsageError("-G: the data '\(query)' does not make a valid URL (use --data-urlencode)")
        }
        return result
    }

    /// `-T FILE` to a URL ending in `/`: the URL with the file's name added, as curl does.
    static func addingFileName(of path: String, to url: URL) -> URL {
        guard url.path.isEmpty || url.path.hasSuffix("/") || url.absoluteString.hasSuffix("/") else { return url }
        let name = URL(fileURLWithPath: path).lastPathComponent
        let encoded = RequestData.percentEncoded(name)
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.percentEncodedPath = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath) + encoded
        return components.url ?? url
    }

    /// `text`, or nil when absent; an empty value is a usage error with `message`.
    static func nonEmpty(_ text: String?, _ message: String) throws(UsageError) -> String? {
        guard let text else { return nil }
        guard !text.isEmpty else { throw UsageError(message) }
        return text
    }

    /// A number of seconds: positive (or zero when allowed), finite.
    static func positiveSeconds(_ text: String?, option: String, allowsZero: Bool = false) throws(UsageError) -> Double? {
        guard let text else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 || (allowsZero && seconds == 0) else {
            throw UsageError("\(option) needs a \(allowsZero ? "" : "positive ")number of seconds, not '\(text)'")
        }
        return seconds
    }

    /// A whole number of 0 or more.
    static func count(_ text: String?, option: String) throws(UsageError) -> Int? {
        guard let text else { return nil }
        guard let count = Int(text), count >= 0 else {
            throw UsageError("\(option) needs a whole number of 0 or more, not '\(text)'")
        }
        return count
    }

    /// A byte count with curl's suffixes: `k`/`K` (1024), `m`/`M`, `g`/`G`; `100k` is 102,400.
    static func byteCount(_ text: String?, option: String) throws(UsageError) -> Int64? {
        guard let text else { return nil }
        let multipliers: [Character: Int64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var digits = Substring(text)
        var multiplier: Int64 = 1
        if let last = digits.last, let factor = multipliers[Character(last.lowercased())] {
            multiplier = factor
            digits = digits.dropLast()
        }
        guard let number = Double(digits), number.isFinite, number > 0, number * Double(multiplier) < 9e18 else {
            throw UsageError("\(option) needs a number of bytes (k, M or G after it for KiB, MiB, GiB), not '\(text)'")
        }
        return Int64(number * Double(multiplier))
    }

    /// An absolute http(s) URL with a host; `http://` is put in front of a URL without a scheme.
    ///
    /// - Throws: ``UsageError`` with exit status 1 for a scheme other than http and https
    ///   (`htp://host`, `htps:/host`, `ftp://host`), 3 for a URL that is malformed.
    static func parseURL(_ text: String) throws(UsageError) -> URL {
        if let scheme = explicitScheme(text), !["http", "https"].contains(scheme.lowercased()) {
            throw UsageError(
                "Protocol \"\(scheme)\" not supported (courier speaks http://, https://, ws:// and wss://)", exitCode: .unsupportedProtocol)
        }
        let candidate = explicitScheme(text) == nil ? "http://" + text : text
        guard let url = URL(string: candidate), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw UsageError(
                "URL rejected: '\(text)' is not a valid URL (expected http://host/path or https://host/path)",
                exitCode: .malformedURL)
        }
        return url
    }

    /// The scheme `text` starts with: letters, digits, `+`, `-` or `.` after a letter, then `:/`
    /// (`htp://x`, `htps:/x`); nil when there is none (`localhost:8080/x` has a port, not a scheme).
    static func explicitScheme(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
            text[text.index(after: colon)...].hasPrefix("/")
        else { return nil }
        return String(scheme)
    }
}
