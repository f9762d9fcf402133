extension FetchOptions {
    /// Whether `-C`'s next argument is its value: `-` (continue from what is there) or an offset.
    static let isContinueValue: @Sendable (String) -> Bool = { $0 == "-" || (!$0.isEmpty && $0.allSatisfy(\.isNumber)) }

    /// The options `courier [METHOD] URL...` accepts, in the order `--help` lists them: what the
    /// request says, how it is sent, where its answer goes, then the TLS options.
    static let options: [OptionSpec] =
        requestOptions + transferOptions + outputOptions + ConnectionOptions.options + [
            OptionSpec("help", short: "h", long: "help", help: "show this help")
        ]

    private static let requestOptions: [OptionSpec] = [
        OptionSpec(
            "url", long: "url", value: "URL", repeatable: true,
            help: "a URL to fetch (repeatable; as the URL arguments, after them)"),
        OptionSpec("request", short: "X", long: "request", value: "METHOD", help: "the request method (same as the METHOD argument)"),
        OptionSpec(
            "header", short: "H", long: "header", value: "'NAME: VALUE'|@FILE", repeatable: true,
            help: "add a request header (repeatable); 'NAME:' removes one, 'NAME;' sends it empty, @FILE one per line"),
        OptionSpec("user-agent", short: "A", long: "user-agent", value: "NAME", help: "the User-Agent header ('' sends none)"),
        OptionSpec(
            "referer", short: "e", long: "referer", value: "URL[;auto]",
            help: "the Referer header; ';auto' also sets it on each redirect followed"),
        OptionSpec(
            "user", short: "u", long: "user", value: "USER[:PASSWORD]",
            help: "basic authentication; without ':PASSWORD' the password is asked for on the terminal"),
        OptionSpec("oauth2-bearer", long: "oauth2-bearer", value: "TOKEN", help: "send 'Authorization: Bearer TOKEN'"),
        OptionSpec("netrc", short: "n", long: "netrc", help: "take the login and password for the host from ~/.netrc"),
        OptionSpec("netrc-file", long: "netrc-file", value: "FILE", help: "like -n, from FILE"),
        OptionSpec("netrc-optional", long: "netrc-optional", help: "like -n, and no error when ~/.netrc is missing"),
        OptionSpec(
            "cookie", short: "b", long: "cookie", value: "NAME=VALUE|FILE", repeatable: true,
            help: "send these cookies, or read a Netscape cookie file (and keep cookies across redirects)"),
        OptionSpec(
            "cookie-jar", short: "c", long: "cookie-jar", value: "FILE",
            help: "write every cookie to FILE (Netscape format, '-' for stdout) at the end"),
        OptionSpec("junk-session-cookies", short: "j", long: "junk-session-cookies", help: "with -b FILE: leave out its session cookies"),
        OptionSpec(
            "data", short: "d", long: "data", aliases: ["data-ascii"], value: "DATA|@FILE", repeatable: true,
            help: "send DATA (or FILE without its line breaks) as a form body (implies POST); pieces join with '&'"),
        OptionSpec(
            "data-binary", long: "data-binary", value: "DATA|@FILE", repeatable: true,
            help: "like -d, FILE sent exactly (streamed when it is the whole body)"),
        OptionSpec("data-raw", long: "data-raw", value: "DATA", repeatable: true, help: "like -d, and '@' is just a character"),
        OptionSpec(
            "data-urlencode", long: "data-urlencode", value: "[NAME]=TEXT|[NAME]@FILE", repeatable: true,
            help: "like -d, the text (or FILE) percent-encoded"),
        OptionSpec(
            "json", long: "json", value: "JSON|@FILE", repeatable: true,
            help: "send JSON (checked; pieces concatenated) with Content-Type and Accept: application/json"),
        OptionSpec(
            "form", short: "F", long: "form", value: "NAME=VALUE|NAME=@FILE", repeatable: true,
            help: "add a multipart form field; @FILE streams a file part (;type=MIME to set its type)"),
        OptionSpec("get", short: "G", long: "get", help: "put the -d data in the URL's query and send GET"),
        OptionSpec(
            "upload-file", short: "T", long: "upload-file", value: "FILE",
            help: "PUT FILE, streamed ('-' for stdin; a URL ending in '/' gets the file's name)"),
        OptionSpec("range", short: "r", long: "range", value: "RANGE", help: "ask for these bytes only (Range: bytes=RANGE, e.g. 0-499)"),
        OptionSpec(
            "time-cond", short: "z", long: "time-cond", value: "[-]DATE|FILE",
            help: "only if modified since DATE or FILE's time (before it, with '-')"),
        OptionSpec("head", short: "I", long: "head", help: "send a HEAD request and print the response head"),
        OptionSpec(
            "compressed", long: "compressed",
            help: "ask for a compressed body (Accept-Encoding) and decode it; without it bodies come as sent"),
    ]

    private static let transferOptions: [OptionSpec] = [
        OptionSpec("location", short: "L", long: "location", help: "follow redirects (at most 50, or --max-redirs)"),
        OptionSpec("location-trusted", long: "location-trusted", help: "like -L, and send -u's credentials to other hosts too"),
        OptionSpec(
            "max-redirects", long: "max-redirs", aliases: ["max-redirects"], value: "N",
            help: "with -L: follow at most N redirects (exit 47 past them)"),
        OptionSpec(
            "proto", long: "proto", value: "PROTOCOLS",
            help: "allow only these protocols (=https, -http, +https...), redirects included"),
        OptionSpec("proto-redir", long: "proto-redir", value: "PROTOCOLS", help: "allow only these protocols for redirects"),
        OptionSpec("max-time", short: "m", long: "max-time", value: "SECONDS", help: "fail (exit 28) when the whole transfer takes longer"),
        OptionSpec("connect-timeout", long: "connect-timeout", value: "SECONDS", help: "fail (exit 28) when connecting takes longer"),
        OptionSpec("timeout", long: "timeout", value: "SECONDS", help: "fail when the connection is idle this long (fractions allowed)"),
        OptionSpec(
            "retry", long: "retry", value: "N",
            help: "retry up to N times after a timeout, a lost connection or 408/429/500/502/503/504"),
        OptionSpec(
            "retry-delay", long: "retry-delay", value: "SECONDS",
            help: "wait this long before the first retry (doubling after; default 1)"),
        OptionSpec("retry-max-time", long: "retry-max-time", value: "SECONDS", help: "no retry starts after this long"),
        OptionSpec("retry-all-errors", long: "retry-all-errors", help: "with --retry: retry after any failure (a status of 400 or more with -f)"),
        OptionSpec("retry-connrefused", long: "retry-connrefused", help: "with --retry: also retry a refused connection"),
        OptionSpec(
            "proxy", short: "x", long: "proxy", value: "[PROTOCOL://]HOST[:PORT]",
            help: "use this HTTP proxy ('' for none; default: http_proxy, https_proxy, all_proxy)"),
        OptionSpec("noproxy", long: "noproxy", value: "HOSTS", help: "never proxy these hosts (comma-separated, '*' for all; default: no_proxy)"),
        OptionSpec("limit-rate", long: "limit-rate", value: "RATE", help: "at most RATE bytes per second (k, M, G suffixes)"),
        OptionSpec("max-filesize", long: "max-filesize", value: "BYTES", help: "fail (exit 63) when the body is larger (k, M, G suffixes)"),
        OptionSpec("parallel", short: "Z", long: "parallel", help: "run the URLs' transfers at the same time"),
        OptionSpec("parallel-max", long: "parallel-max", value: "N", help: "with -Z: at most N at once (default 50, at most 300)"),
        OptionSpec("parallel-immediate", long: "parallel-immediate", help: "accepted: with -Z, courier never waits to share a connection"),
        OptionSpec(
            "transport", long: "transport", value: "curl|urlsession",
            help: "choose the transport (default: libcurl on Linux)"),
        OptionSpec(
            "config", short: "K", long: "config", value: "FILE", repeatable: true, expandsInPlace: true,
            help: "read more options from FILE (curl's config syntax, '-' for stdin)"),
        OptionSpec("disable", short: "q", long: "disable", help: "accepted: courier reads no ~/.curlrc"),
        OptionSpec("globoff", short: "g", long: "globoff", help: "accepted: courier does not expand {a,b} or [1-9] in URLs"),
    ]

    private static let outputOptions: [OptionSpec] = [
        OptionSpec(
            "output", short: "o", long: "output", value: "FILE", repeatable: true,
            help: "write the body to FILE ('-' for stdout); one per URL, in order"),
        OptionSpec(
            "remote-name", short: "O", long: "remote-name",
            help: "write the body to a file named like the URL's last path segment; one per URL"),
        OptionSpec("remote-name-all", long: "remote-name-all", help: "-O for every URL that has no -o or -O"),
        OptionSpec("output-dir", long: "output-dir", value: "DIR", help: "put the -o and -O files in DIR"),
        OptionSpec("create-dirs", long: "create-dirs", help: "create the directories the -o files need"),
        OptionSpec(
            "remote-header-name", short: "J", long: "remote-header-name",
            help: "with -O: name the file as the server's Content-Disposition says (never replacing a file)"),
        OptionSpec("remote-time", short: "R", long: "remote-time", help: "give the file the server's Last-Modified time"),
        OptionSpec(
            "continue", short: "C", long: "continue-at", aliases: ["continue"], optionalValue: isContinueValue,
            help: "with -o: -C - resumes through the download store; -C OFFSET appends from byte OFFSET"),
        OptionSpec(
            "store", long: "store", value: "DIR",
            help: "with -C -: the download store directory (or set COURIER_DOWNLOAD_STORE)"),
        OptionSpec(
            "cache", long: "cache", value: "DIR",
            help: "HTTP cache (RFC 9111) in DIR: fresh responses are served from it, stale ones revalidated"),
        OptionSpec("include", short: "i", long: "include", help: "print the response head (status line and headers) before the body"),
        OptionSpec("dump-header", short: "D", long: "dump-header", value: "FILE", help: "write the response heads to FILE ('-' for stdout)"),
        OptionSpec(
            "write-out", short: "w", long: "write-out", value: "FORMAT|@FILE",
            help: "print FORMAT after the transfer: %{http_code}, %{time_total}... (see below)"),
        OptionSpec("fail", short: "f", long: "fail", help: "exit with 22 and print no body when the status is 400 or more"),
        OptionSpec("fail-with-body", long: "fail-with-body", help: "exit with 22 when the status is 400 or more, after printing the body"),
        OptionSpec("fail-early", long: "fail-early", help: "with several URLs: stop at the first that fails"),
        OptionSpec("silent", short: "s", long: "silent", help: "no progress bar and no error messages"),
        OptionSpec("show-error", short: "S", long: "show-error", help: "with -s: still print error messages"),
        OptionSpec("progress-bar", short: "#", long: "progress-bar", help: "accepted: the progress of -o is a bar on a terminal"),
        OptionSpec("no-progress-meter", long: "no-progress-meter", help: "no progress bar (errors are still shown)"),
        OptionSpec("no-buffer", short: "N", long: "no-buffer", help: "accepted: standard output is never buffered"),
        OptionSpec(
            "events", long: "events",
            help: "print an event stream event by event, formatted, reconnecting (the default on a terminal)"),
        OptionSpec(
            "no-reconnect", long: "no-reconnect",
            help: "print an event stream once: no reconnection when it ends"),
        OptionSpec(
            "verbose", short: "v", long: "verbose",
            help: "print the connection, the heads as sent and received, and metrics, to stderr"),
    ]
}
