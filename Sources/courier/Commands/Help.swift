import Courier

/// The help texts of `courier` and its commands.
enum Help {
    /// The commands `courier help` knows.
    static let commands = ["fetch", "ws", "demo", "help"]

    /// The help of `command`, or nil for an unknown command.
    static func text(for command: String?) -> String? {
        switch command {
        case nil: main
        case "fetch": fetch
        case "ws": webSocket
        case "demo": demo
        case "help": help
        default: nil
        }
    }

    /// `courier --help`.
    static var main: String {
        """
        courier \(Courier.version): an HTTP client built on Courier.

        Usage:
          courier [METHOD] URL [URL...] [ITEM...] [options]
                                make requests (the 'fetch' command; 'courier fetch ...' works too)
          courier ws://HOST/PATH [options]
                                open a WebSocket (or wss://): stdin lines out, messages to stdout
                                (see 'courier help ws')
          courier demo          watch Courier work against an embedded test server, offline
          courier help [COMMAND]
                                help for a command: fetch, ws, demo, help
          courier --version     print the version
          courier --generate-completion-script bash|zsh|fish
                                print a shell completion script

        Options for a request:
        \(OptionHelp.lines(for: FetchOptions.options))

        \(items)

        \(writeOut)

        \(examples)

        Exit codes:
        \(ExitCode.helpText)
        """
    }

    /// `courier help fetch`.
    static var fetch: String {
        """
        Usage: courier [METHOD] URL [URL...] [ITEM...] [options]

        Makes an HTTP request per URL, as curl does; the flags below mean what they mean to curl.
        METHOD is GET, or POST when a body is given (HEAD with -I, PUT with -T). A URL without a
        scheme gets http://; a scheme other than http:// and https:// is an error (exit 1);
        ws:// and wss:// open a WebSocket ('courier help ws'). More URLs (with their scheme, or
        with --url) are fetched one after the other over the same connections, or at the same
        time with -Z (at most --parallel-max); each -o or -O goes with one URL, in order, and
        the exit status is the last transfer's. Options can also come from a file: -K FILE reads
        curl's config syntax (one option per line, 'url = ...', '#' comments).

        Redirects are followed only with -L (at most 50, or --max-redirs; exit 47 past them);
        without it the 3xx is the answer, as with curl. Bodies come as the server sends them;
        --compressed asks for a compressed one (Accept-Encoding) and decodes it. The response
        body goes to standard output. Piped or redirected, it is written as it arrives, chunk by
        chunk, so memory stays bounded whatever its size. On a terminal, a body of up to
        \(Units.bytes(Int64(BodyPrinter.formattingLimit))) is collected and formatted: JSON pretty-printed and coloured (set NO_COLOR
        to turn colours off), text ended with a newline, binary withheld; a larger body is written
        as it is. An event stream (text/event-stream) is written as its bytes when piped, as curl
        writes it; on a terminal (or with --events) it is printed event by event, its JSON data
        formatted, and reconnected when it ends (--no-reconnect: not). The response to a request
        with a body (-d, --json, -F, -T) is held in memory before it is written.

        Files: -o FILE streams the body to FILE (or -O, named after the URL; -J after the
        server's Content-Disposition; --output-dir DIR, --create-dirs), created with mode 0644
        minus the umask, with one progress bar on a terminal and no progress at all when standard
        error is a pipe or a file (-s or --no-progress-meter turn it off everywhere). -R gives it
        the server's Last-Modified time.

        Resuming: with -C - (or -C) the download is resumable: its bytes are kept in the download
        store (default \(DownloadStore.defaultDirectory.path), or --store DIR, or
        COURIER_DOWNLOAD_STORE), not in FILE, which appears only once it is complete; running the
        same command again, after Ctrl-C, a crash or a lost connection, continues from them with
        Range and If-Range. When the store has nothing for the URL but FILE exists (from curl, or
        an earlier run), FILE itself is continued: Range: bytes=SIZE- with If-Range carrying
        FILE's modification time, which matches the server's Last-Modified only for a file saved
        with it (-R, and every -C - download): a 416 means FILE is complete, a 206 appends the
        rest, and a whole new body replaces FILE rather than be stitched onto bytes of another
        version. A server that ignores ranges (the whole file, no Accept-Ranges: bytes) ends the
        command with curl's 33, "Cannot resume", nothing overwritten. -C OFFSET is curl's: the
        body from byte OFFSET is appended to FILE (33 when the server sends the whole file).

        Cache: --cache DIR turns on Courier's HTTP cache (RFC 9111) for the command, stored in
        DIR (created if needed, 250 MiB at most, the least recently used entries removed first):
        a fresh stored response is served without a request, a stale one is revalidated with
        If-None-Match / If-Modified-Since, and cacheable responses are stored for the next run.
        Entries are written crash-safely, so a run killed midway never leaves a torn entry.
        With -v, a '* cache: ...' line says what the cache did: 'miss (network)', 'hit',
        'revalidated (304)', or 'hit, stale (reason)'.

        Heads: -v prints what libcurl does ('* Trying 127.0.0.1:443...', '* Connected to ...',
        '* ALPN: server accepted h2', the TLS version and cipher), the request head as sent
        ('> GET /path HTTP/1.1'...) and the response head ('< HTTP/1.1 200 OK'...) to standard
        error, and Courier's metrics; -i prints the response head to standard output before the
        body (into the file with -o); -I sends HEAD and prints the head; -D FILE writes the heads
        to FILE. Response fields are printed as they came, in wire order (over URLSession
        sorted by name: FoundationNetworking does not keep the order). Errors read like curl's, with curl's exit code in parentheses: 'courier: (6) Could
        not resolve host: example.invalid'; -v adds the transport's own words on a
        'courier: details:' line. -s hides errors and progress, -S brings errors back.
        -f/--fail exits with 22 on a status of 400 or more (--fail-with-body: after printing the
        body). --retry N retries timeouts, unresolved hosts, lost connections and 408, 429, 500,
        502, 503, 504 (--retry-connrefused: refused connections too; --retry-all-errors: any
        failure); after the last retry such a status exits with 22.

        Bodies: -d DATA sends DATA as a form (Content-Type: application/x-www-form-urlencoded
        unless -H sets one); -d @FILE sends FILE without its line breaks (a file that is not text
        is refused: use --data-binary); several -d, --data-binary, --data-raw and --data-urlencode
        pieces are joined with '&'; -G puts them in the URL's query instead. --data-binary @FILE
        alone is streamed from disk, as is -T FILE (PUT; '-' for stdin). --json checks its
        argument (or @FILE) is JSON and sends it as application/json; -F builds a multipart form,
        and -F name=@FILE streams the file as a file part. Only one kind of body per request.

        Cookies, passwords, proxies: -b NAME=VALUE sends a cookie; -b FILE reads a Netscape cookie
        file (curl's) and keeps every cookie received across redirects and URLs; -c FILE writes
        them all at the end. -u USER asks for the password on the terminal; -n takes it from
        ~/.netrc (--netrc-file FILE). -x/--proxy and --noproxy choose the proxy (default:
        http_proxy, https_proxy, all_proxy, no_proxy).

        TLS and HTTP versions, spelled as in curl: --cacert FILE and --capath DIR trust only the
        certificate authorities they name; unlike curl on Debian, --cacert replaces the system
        store instead of adding to it. Without them the system store is used (SSL_CERT_FILE and
        SSL_CERT_DIR replace it, as for OpenSSL and curl). -E/--cert FILE[:PASSWORD] presents a
        client certificate: the first ':' not written '\\:' starts the password ('\\\\' is a
        backslash); --key names the key when FILE does not hold it, --pass gives its password, and
        --cert-type P12 reads a PKCS#12 file (--cert file.p12:PASSWORD). Given neither, OpenSSL
        asks on the terminal for the password of an encrypted PEM key, as with curl.
        --pinnedpubkey pins the URL's host: a redirect to another host, or to http://, is then
        not followed.
        -k/--insecure turns certificate checks off and warns each time. With -v, each exchange's
        protocol is printed: * HTTP/2, TLSv1.3, TLS_AES_256_GCM_SHA384.

        Options:
        \(OptionHelp.lines(for: FetchOptions.options))

        \(items)

        \(writeOut)

        \(examples)

        Exit codes:
        \(ExitCode.helpText)
        """
    }

    /// `courier help ws`, `courier ws://... --help`.
    static var webSocket: String {
        """
        Usage: courier ws://HOST/PATH [options]
               courier wss://HOST/PATH [options]

        Opens a WebSocket and relays it: each line of standard input is sent as a text message
        (without its newline), and each message that arrives is printed at once on standard
        output. A text message is printed followed by a newline; on a terminal, a JSON object or
        array is pretty-printed and coloured (NO_COLOR turns colours off). A binary message is
        printed as one line, 'binary message, N bytes: HEX' (its first \(WebSocketPrinter.summaryBytes) bytes in
        hexadecimal). With --binary, lines of standard input are sent as binary messages and binary
        messages are written as their bytes, with nothing added (text messages still get a
        newline). A line that is not UTF-8 is sent as a binary message, with a warning.

        The end of standard input (Ctrl-D, or the end of a pipe) closes the WebSocket with code
        1000; courier exits 0 once the server has answered the close (messages arriving after
        that are not printed). With --keep-open it goes on printing messages until the server
        closes or Ctrl-C, for a subscription piped in. A server that closes with 1000, 1001 or no
        code ends courier with 0 too; any other code with 101, after a line giving the code and
        reason: 'courier: (101) The server closed the WebSocket with 4001: bye'. A connection
        dropped without a close exits with 56. A handshake the server refuses exits with 22
        ('Refused WebSocket upgrade: 401 Unauthorized'), a server that breaks the protocol with 8;
        a connection that cannot be made or a certificate that is not trusted with the same codes
        as a request. Ctrl-C closes with 1001 and exits 130.

        The handshake is HTTP/1.1, with -H headers (-u for basic authentication) and
        permessage-deflate offered (--no-compression: not). Redirects are not followed. The TLS
        options are a request's (--cacert, --capath, -E/--cert, --key, --pass, --pinnedpubkey,
        -k, --tlsv1.2, --tlsv1.3). -v describes the connection, the subprotocol, compression and
        the close on standard error; -s hides error messages, -S brings them back.

        Options:
        \(OptionHelp.lines(for: WebSocketOptions.options))

        Examples:
          courier wss://echo.example.com/          # type lines; Ctrl-D closes
          echo '{"op":"subscribe","topic":"btc"}' | courier --keep-open wss://stream.example.com/v1 -H "Authorization: Bearer $TOKEN"
          courier --subprotocol chat ws://localhost:8080/chat
          courier --binary ws://localhost:8080/frames < lines.txt > replies.bin

        Exit codes:
        \(ExitCode.helpText)
        """
    }

    /// `courier help demo`.
    static var demo: String {
        """
        Usage: courier demo

        Starts Courier's test server inside the process on 127.0.0.1 (no network access needed)
        and walks through Courier's features, printing what happened and the figures:
          1. a JSON GET decoded into a Swift type and pretty-printed;
          2. validation failing readably (a 404 rejected by validate());
          3. a download with a progress bar, interrupted mid-way and resumed from disk through a
             download store, with the bytes re-used and fetched;
          4. ten identical requests collapsed into one transfer by deduplication.
        Temporary files are removed at the end. Takes a few seconds.

        Options:
        \(OptionHelp.lines(for: Demo.options))

        Exit codes: 0 when every step behaved as described, 100 otherwise, 130 when interrupted.
        """
    }

    /// `courier help help`.
    static var help: String {
        """
        Usage: courier help [COMMAND]

        Prints the help of COMMAND (fetch, ws, demo, help), or the overview without one.
        'courier COMMAND --help' prints the same.
        """
    }

    private static var items: String {
        """
        Items (HTTPie style, after the URL):
          name=value       a string field of a JSON body (sent as with --json)
          name:=json       a raw JSON field: count:=3, tags:='["a","b"]', ok:=true
          name==value      a query parameter added to the URL
          Header:value     a request header
        """
    }

    /// `words` in lines of at most 90 columns, each indented by two spaces.
    private static func wrapped(_ words: [String]) -> String {
        var lines: [String] = []
        var line = ""
        for word in words {
            if !line.isEmpty, line.count + 1 + word.count > 88 {
                lines.append("  " + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append("  " + line) }
        return lines.joined(separator: "\n")
    }

    private static var writeOut: String {
        """
        Write-out (-w FORMAT or -w @FILE), printed after each transfer; \\n, \\t and %% work,
        %header{NAME} is a response header, %{stderr} and %{stdout} switch the stream:
        \(wrapped(WriteOut.variables.filter { $0 != "stdout" && $0 != "stderr" }.map { "%{\($0)}" }))
        """
    }

    private static var examples: String {
        """
        Examples:
          courier https://api.example.com/users/42
          courier -v --fail https://api.example.com/health
          courier -sSL --compressed -o page.html https://example.com/
          courier -Z -O https://example.com/a.iso -O https://example.com/b.iso
          courier -b cookies.txt -c cookies.txt -L https://example.com/login
          courier -sS -o /dev/null -w '%{http_code} %{time_total}\\n' https://example.com/
          courier POST https://api.example.com/users nick=ada level:=7 X-Trace:1
          courier POST https://api.example.com/users --json '{"nick":"ada","level":7}'
          courier PUT https://api.example.com/files/report.pdf -d @report.pdf
          courier https://api.example.com/photos -F title=Holiday -F photo=@beach.jpg
          courier -C -o big.iso https://example.com/big.iso   # Ctrl-C, then run it again to continue
          courier --cacert ca.pem --cert client.pem --key client.key https://internal.example/api
          courier --http2-prior-knowledge http://localhost:8080/   # cleartext HTTP/2 (h2c)
          courier wss://stream.example.com/v1 -H 'Authorization: Bearer TOKEN'   # a WebSocket
        """
    }
}
