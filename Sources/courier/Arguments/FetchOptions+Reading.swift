import Courier
import Foundation

/// How ``FetchOptions/make(from:environment:readFile:readData:)`` reads each group of options.
extension FetchOptions {
    /// `-H`, header items, `-A`, `-e`, `-r` and `-z`.
    mutating func readHeaders(_ parsed: ParsedArguments, items: [RequestItem], readFile: (String) throws -> String) throws(UsageError) {
        let given = try Self.headers(from: parsed, readFile: readFile) + items.compactMap(\.header)
        // curl's `-H 'Name:'` removes the header (its own included); `-H 'Name;'` sends it empty.
        removedHeaders = given.filter(\.removes).map(\.name)
        headers = given.filter { !$0.removes }
        if let agent = parsed.value("user-agent") { userAgent = agent }
        if let referer = parsed.value("referer") {
            let auto = referer.hasSuffix(";auto")
            let value = auto ? String(referer.dropLast(";auto".count)) : referer
            refererOnRedirects = auto
            if !value.isEmpty { headers.append(try HeaderField.parse("Referer: \(value)")) }
        }
        if let range = parsed.value("range") {
            guard !range.isEmpty, range.allSatisfy({ $0.isNumber || $0 == "-" || $0 == "," }) else {
                throw UsageError("-r/--range: '\(range)' is not a byte range (e.g. 0-499, 500-, -500)")
            }
            headers.append(HeaderField(name: "Range", value: "bytes=\(range)"))
        }
        if let text = parsed.value("time-cond") {
            let condition = try TimeCondition(text)
            timeCondition = condition
            headers.append(condition.header)
        }
    }

    /// `--oauth2-bearer`, `-u` (a password to ask for when it has none), and the netrc options.
    mutating func readAuthentication(
        _ parsed: ParsedArguments, url: URL, environment: [String: String], readFile: (String) throws -> String
    ) throws(UsageError) {
        if let token = parsed.value("oauth2-bearer") {
            headers.append(try HeaderField.parse("Authorization: Bearer \(token)"))
        }
        if let user = parsed.value("user") {
            if user.contains(":") {
                try Self.addBasicAuthorization(user: user, to: &headers)
            } else if !headers.contains(where: { $0.name.lowercased() == "authorization" }) {
                passwordPromptUser = user
            }
            return
        }
        let netrcFile = parsed.value("netrc-file")
        guard parsed.has("netrc") || parsed.has("netrc-optional") || netrcFile != nil else { return }
        let path = netrcFile ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.netrc")
        let text: String
        do {
            text = try readFile(path)
        } catch {
            // curl goes on without credentials when the file cannot be read.
            return
        }
        let login = url.user
        guard let entry = Netrc(text).entry(for: url.host ?? "", user: login), let user = entry.login ?? login else { return }
        try Self.addBasicAuthorization(user: "\(user):\(entry.password ?? "")", to: &headers)
    }

    /// The flags, `-D`, `-w`, the cookie options, `--proto`, `-x` and `--noproxy`.
    mutating func readFlags(_ parsed: ParsedArguments) throws(UsageError) {
        verbose = parsed.has("verbose")
        failOnHTTPError = parsed.has("fail")
        failWithBody = parsed.has("fail-with-body")
        if failOnHTTPError, failWithBody { throw UsageError("-f/--fail and --fail-with-body cannot be used together (choose one)") }
        failEarly = parsed.has("fail-early")
        reconnects = !parsed.has("no-reconnect")
        events = parsed.has("events") ? true : nil
        includeHead = parsed.has("include") || headOnly
        dumpHeader = try Self.nonEmpty(parsed.value("dump-header"), "-D/--dump-header needs a file name ('-' for stdout)")
        silent = parsed.has("silent")
        showError = parsed.has("show-error")
        noProgress = parsed.has("no-progress-meter")
        compressed = parsed.has("compressed")
        locationTrusted = parsed.has("location-trusted")
        followsRedirects = parsed.has("location") || locationTrusted
        parallel = parsed.has("parallel")
        remoteHeaderName = parsed.has("remote-header-name")
        remoteTime = parsed.has("remote-time")
        createDirectories = parsed.has("create-dirs")
        retryAllErrors = parsed.has("retry-all-errors")
        retryConnectionRefused = parsed.has("retry-connrefused")
        if let format = parsed.value("write-out") { writeOut = WriteOut(format) }
        cookies = try CookieOptions(parsed)
        if let text = parsed.value("proto") { protocols = try ProtocolList.parse(text, option: "--proto") }
        if let text = parsed.value("proto-redir") { redirectProtocols = try ProtocolList.parse(text, option: "--proto-redir") }
        proxy = parsed.value("proxy")
        noProxy = parsed.value("noproxy")
    }

    /// The timeouts, counts and sizes.
    mutating func readLimits(_ parsed: ParsedArguments) throws(UsageError) {
        timeout = try Self.positiveSeconds(parsed.value("timeout"), option: "--timeout")
        maxTime = try Self.positiveSeconds(parsed.value("max-time"), option: "-m/--max-time")
        connectTimeout = try Self.positiveSeconds(parsed.value("connect-timeout"), option: "--connect-timeout")
        retryDelay = try Self.positiveSeconds(parsed.value("retry-delay"), option: "--retry-delay", allowsZero: true)
        retryMaxTime = try Self.positiveSeconds(parsed.value("retry-max-time"), option: "--retry-max-time", allowsZero: true)
        maxRedirects = try Self.count(parsed.value("max-redirects"), option: "--max-redirs")
        retries = try Self.count(parsed.value("retry"), option: "--retry") ?? 0
        if let text = parsed.value("parallel-max") {
            guard let count = Int(text), (1...300).contains(count) else {
                throw UsageError("--parallel-max needs a number from 1 to 300, not '\(text)'")
            }
            parallelMax = count
        }
        limitRate = try Self.byteCount(parsed.value("limit-rate"), option: "--limit-rate")
        maxFileSize = try Self.byteCount(parsed.value("max-filesize"), option: "--max-filesize")
    }

    /// `-C -` (the store) or `-C OFFSET` (appended to the file), and what they cannot go with.
    mutating func readResume(_ parsed: ParsedArguments) throws(UsageError) {
        guard parsed.has("continue") else { return }
        if let value = parsed.value("continue"), value != "-" {
            guard let offset = Int64(value) else { throw UsageError("-C: '\(value)' is not a byte offset") }
            resumeOffset = offset
        } else {
            resumable = true
        }
        if resumable {
            guard output != nil else { throw UsageError("-C/--continue-at needs -o FILE (a download to resume; not standard output)") }
            if remoteHeaderName { throw UsageError("-C - and -J/--remote-header-name cannot be used together (the file's name is not known before)") }
        }
        if let body { throw UsageError("-C/--continue-at cannot be used with a request body (\(body.optionName))") }
        if targets.count > 1, resumable {
            throw UsageError("-C - takes one URL (each download is resumed from the store by its URL: run one command per file)")
        }
    }

    /// `--store` (or `COURIER_DOWNLOAD_STORE`) and `--cache`.
    mutating func readStorage(_ parsed: ParsedArguments, environment: [String: String]) throws(UsageError) {
        if let store = parsed.value("store") {
            guard resumable else { throw UsageError("--store only applies to resumable downloads (-C - -o FILE)") }
            guard !store.isEmpty else { throw UsageError("--store needs a directory") }
            storeDirectory = store
        } else if let store = environment["COURIER_DOWNLOAD_STORE"], !store.isEmpty {
            storeDirectory = store
        }
        if let cache = parsed.value("cache") {
            guard !cache.isEmpty else { throw UsageError("--cache needs a directory") }
            cacheDirectory = cache
        }
    }

    /// What only the curl transport can do.
    func checkTransport() throws(UsageError) {
        guard transport == .urlsession else { return }
        let curlOnly = [
            ("-x/--proxy", proxy != nil), ("--noproxy", noProxy != nil), ("--connect-timeout", connectTimeout != nil),
            ("--limit-rate", limitRate != nil),
        ]
        if let (name, _) = curlOnly.first(where: \.1) {
            throw UsageError("\(name) needs the curl transport (--transport urlsession cannot honour it)")
        }
    }
}
