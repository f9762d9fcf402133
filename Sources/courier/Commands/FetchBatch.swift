import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier [METHOD] URL... [options]`: every URL's transfer, one after the other or, with `-Z`,
/// up to `--parallel-max` at once, over one session (so that they share connections, as curl's
/// transfers do) and one cookie engine.
///
/// The exit status is the last transfer's, as with curl (`--fail-early`: the first failure ends
/// the command with its status); with `-Z`, a failure's whatever came after it (the first in the
/// order of the URLs), as curl reports one of them.
struct FetchBatch {
    let options: FetchOptions
    let interrupts: Interrupts
    let console: Console

    /// Runs every transfer and returns the exit status.
    func run() async -> ExitCode {
        var options = options
        if options.connection.insecure { message(ConnectionOptions.insecureWarning) }
        if let user = options.passwordPromptUser {
            let password = PasswordPrompt.ask("Enter host password for user '\(user)':", interrupts: interrupts)
            let header = HTTPHeader.authorization(username: user, password: password)
            options.headers.append(HeaderField(name: header.name, value: header.value))
        }
        let context = FetchContext(literalCookies: options.cookies.literal, cookieJar: loadCookies())
        let dump: HeadDump?
        do {
            dump = try options.dumpHeader.map { path throws(UsageError) in try HeadDump(path: path, console: console) }
        } catch {
            message(error.description)
            return error.exitCode
        }
        defer { dump?.close() }
        let configuration = makeConfiguration(context: context)
        do {
            try configuration.validate()
        } catch {
            let report = ErrorReport(error)
            if options.showsErrors || options.verbose { report.lines(verbose: options.verbose).forEach(console.message) }
            return report.exitCode
        }
        let session = makeSession(configuration: configuration, dump: dump, context: context)
        let status =
            options.parallel
            ? await runInParallel(options, session: session, context: context) : await runInTurn(options, session: session, context: context)
        if let failure = writeCookies(context) { return failure }
        return status
    }

    private func runInTurn(_ options: FetchOptions, session: Session, context: FetchContext) async -> ExitCode {
        var status = ExitCode.success
        for (index, target) in options.targets.enumerated() {
            let command = FetchCommand(
                options: options.forTarget(target), session: session, context: context, interrupts: interrupts, console: console,
                index: index)
            status = await command.run()
            if status == .interrupted || (options.failEarly && status != .success) { break }
        }
        return status
    }

    private func runInParallel(_ options: FetchOptions, session: Session, context: FetchContext) async -> ExitCode {
        var statuses = [ExitCode](repeating: .success, count: options.targets.count)
        await withTaskGroup(of: (Int, ExitCode).self) { group in
            var next = 0
            func startNext() {
                guard next < options.targets.count else { return }
                let index = next
                let command = FetchCommand(
                    options: options.forTarget(options.targets[index]), session: session, context: context,
                    interrupts: interrupts, console: console, index: index)
                group.addTask { (index, await command.run()) }
                next += 1
            }
            for _ in 0..<min(options.parallelMax, options.targets.count) { startNext() }
            var failed = false
            while let (index, status) = await group.next() {
                statuses[index] = status
                failed = failed || status != .success
                // --fail-early: nothing new starts after a failure; what runs finishes.
                if !(options.failEarly && failed) { startNext() }
            }
        }
        return statuses.first { $0 != .success } ?? .success
    }

    // MARK: Set-up

    /// The session configuration the options ask for: transport, timeouts, redirects, TLS, HTTP
    /// version, compression, limits, proxy and (with `-v` on the curl transport) libcurl's lines.
    func makeConfiguration(context: FetchContext) -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        switch options.transport {
        case .curl: configuration.transport = .curl
        case .urlsession: configuration.transport = .urlSession(.ephemeral)
        case nil: break
        }
        if let timeout = options.timeout { configuration.requestTimeout = timeout }
        if let maxTime = options.maxTime { configuration.resourceTimeout = maxTime }
        configuration.cookies = .none
        configuration.tls = options.connection.tlsConfiguration(host: options.url.host ?? "")
        configuration.httpVersion = options.connection.httpVersion
        configuration.automaticDecompression = options.compressed
        if options.followsRedirects {
            configuration.maximumRedirects = options.maxRedirects ?? 50
            configuration.redirectPolicy = redirectPolicy(context: context)
        } else {
            configuration.redirectPolicy = .doNotFollow
        }
        if options.cacheDirectory != nil { configuration.httpCache = .enabled }
        if let limit = options.maxFileSize {
            configuration.maximumResponseSize = Int(clamping: limit)
            configuration.maximumDownloadSize = limit
        }
        var tuning = TransportTuning()
        tuning.proxy = options.proxy
        tuning.noProxy = options.noProxy
        tuning.connectTimeout = options.connectTimeout.map { .seconds($0) }
        tuning.maximumReceiveRate = options.limitRate
        tuning.maximumSendRate = options.limitRate
        if options.verbose, usesCurlTransport {
            let printer = CurlDebugPrinter(console: console)
            tuning.debugHandler = { printer.print($0) }
        }
        configuration.transportTuning = tuning
        return configuration
    }

    /// Whether the requests go over the curl transport (whose libcurl can describe the wire for `-v`).
    var usesCurlTransport: Bool {
        guard options.transport != .urlsession, case .success = CurlLibraryReport.loaded() else { return false }
        #if canImport(FoundationNetworking)
        return true
        #else
        return options.transport == .curl
        #endif
    }

    /// What `-L` does at each redirect: with `--pinnedpubkey`, only to https URLs of the pinned
    /// host; with `--proto`/`--proto-redir`, only to the schemes they allow (another is recorded,
    /// and the transfer exits 1 as curl's does); `--location-trusted` sends `-u`'s credentials to
    /// other hosts too; the cookie engine takes the 3xx's cookies and sends the next URL's;
    /// `-e URL;auto` sets the Referer.
    func redirectPolicy(context: FetchContext) -> RedirectPolicy {
        let options = options
        let console = console
        let pinnedHost = options.connection.pins.isEmpty ? nil : options.url.host ?? ""
        let authorization = options.headers.last { $0.name.lowercased() == "authorization" }?.value
        let allowed = options.redirectProtocols ?? options.protocols
        return RedirectPolicy { proposed, response in
            var next = proposed
            guard let url = next.url else { return nil }
            if let pinnedHost, !FetchCommand.staysPinned(url, host: pinnedHost) {
                console.message(
                    "courier: warning: --pinnedpubkey: not following the redirect to \(url.absoluteString) (only https://\(pinnedHost) is pinned)")
                return nil
            }
            if let allowed, let scheme = url.scheme?.lowercased(), !allowed.contains(scheme), let from = response.url {
                context.refuseRedirect(from: from, scheme: scheme)
                return nil
            }
            context.takeCookies(from: response)
            if context.cookieJar != nil || !context.literalCookies.isEmpty {
                next.setValue(context.cookieHeader(for: url), forHTTPHeaderField: "Cookie")
            }
            if options.locationTrusted, let authorization, next.value(forHTTPHeaderField: "Authorization") == nil {
                next.setValue(authorization, forHTTPHeaderField: "Authorization")
            }
            if options.refererOnRedirects, let from = response.url {
                next.setValue(from.absoluteString, forHTTPHeaderField: "Referer")
            }
            return next
        }
    }

    /// A session with `configuration`, the store, `--cache`, the head printers and `--retry`.
    func makeSession(configuration: SessionConfiguration, dump: HeadDump?, context: FetchContext) -> Session {
        let storeDirectory =
            options.storeDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? DownloadStore.defaultDirectory
        var monitors: [any EventMonitor] = []
        if options.verbose || options.includeHead || dump != nil {
            let fallback = options.connection.httpVersion == .http2PriorKnowledge ? "HTTP/2" : "HTTP/1.1"
            monitors.append(
                VerboseMonitor(
                    console: console, verbose: options.verbose, includeHead: options.includeHead, routes: context.headRoutes,
                    dump: dump, wireFromTransport: configuration.transportTuning.debugHandler != nil,
                    fallbackVersion: fallback, bodyLength: options.body?.knownLength))
        }
        let removed = options.removedHeaders + (options.userAgent == "" ? ["User-Agent"] : [])
        // -H 'Name:' and -A '' drop headers the session adds by default, after they were merged in.
        let adapters: [any RequestAdapter] =
            removed.isEmpty
            ? []
            : [
                ClosureAdapter { request, _ in
                    var request = request
                    for name in removed { request.setValue(nil, forHTTPHeaderField: name) }
                    return request
                }
            ]
        let retriers: [any RequestRetrier] = options.retries > 0 ? [CommandRetrier(options: options)] : []
        let interceptor = adapters.isEmpty && retriers.isEmpty ? nil : Interceptor(adapters: adapters, retriers: retriers)
        var headers: HTTPHeaders = []
        let agent = options.userAgent ?? "courier/\(Courier.version)"
        if !agent.isEmpty { headers.add(.userAgent(agent)) }
        // --compressed asks for every coding the transport decodes here, as curl asks for libcurl's.
        if options.compressed, usesCurlTransport, case .success(let library) = CurlLibraryReport.loaded(), let codings = library.acceptEncoding {
            headers.add(.acceptEncoding(codings))
        }
        return Session(
            configuration: configuration,
            headers: headers,
            interceptor: interceptor,
            eventMonitors: monitors,
            downloadStore: DownloadStore(directory: storeDirectory),
            responseCache: responseCache,
            callbackQueue: DispatchQueue(label: "courier.callbacks"))
    }

    /// The response cache: with `--cache DIR`, one on that directory; else the default (memory only,
    /// unused by the command's requests).
    var responseCache: ResponseCache {
        guard let directory = options.cacheDirectory else { return ResponseCache() }
        return ResponseCache(diskDirectory: URL(fileURLWithPath: directory, isDirectory: true))
    }

    // MARK: Cookies

    /// The cookie engine's jar: the `-b` files read (a file that cannot be read counts as empty, as
    /// in curl); nil when the engine is off.
    private func loadCookies() -> CookieJar? {
        guard options.cookies.engineOn else { return nil }
        var jar = CookieJar()
        for path in options.cookies.files where !path.isEmpty {
            let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : (try? Data(contentsOf: URL(fileURLWithPath: path)))
            guard let data else { continue }
            jar.load(netscape: String(decoding: data, as: UTF8.self), dropSessionCookies: options.cookies.junkSessionCookies)
        }
        return jar
    }

    /// `-c FILE`: writes every cookie at the end; nil, or the exit status when it cannot be written.
    private func writeCookies(_ context: FetchContext) -> ExitCode? {
        guard let path = options.cookies.jar, let text = context.cookieFileText else { return nil }
        if path == "-" {
            console.out(text)
            return nil
        }
        guard let handle = OutputPath.openForWriting(path, appending: false) else {
            message("courier: (23) Cannot write the cookie jar \(path): \(String(cString: strerror(errno)))")
            return .writeError
        }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data(text.utf8))
            return nil
        } catch {
            message("courier: (23) Cannot write the cookie jar \(path): \(error.localizedDescription)")
            return .writeError
        }
    }

    private func message(_ line: String) {
        if options.showsErrors { console.message(line) }
    }
}
