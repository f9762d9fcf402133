import Courier

/// The help texts of `courier` and its commands.
enum Help {
    /// The commands `courier help` knows.
    static let commands = ["fetch", "ws", "demo", "help"]

    /// `courier --version`.
    static var version: String {
        "courier \(Courier.version) (Courier \(Courier.version))"
    }

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
          courier [METHOD] URL [ITEM...] [options]
                                make a request (the 'fetch' command; 'courier fetch ...' works too)
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
        Usage: courier [METHOD] URL [ITEM...] [options]

        Makes one HTTP request. METHOD is GET, or POST when a body is given (HEAD with -I). A URL
        without a scheme gets http://; ws:// and wss:// open a WebSocket (courier help ws);
        any other scheme is an error (exit 1). Redirects are followed (-L is accepted and changes nothing; --max-redirs 0
        turns them off). The response body goes to standard output. Piped or redirected, it
        is written as it arrives, chunk by chunk, so memory stays bounded whatever its size. On
        a terminal, a body of up to \(Units.bytes(Int64(BodyPrinter.formattingLimit))) is collected and formatted: JSON pretty-printed
        and coloured (set NO_COLOR to turn colours off), text ended with a newline, binary
        withheld; a larger body is written as it is, as it arrives. The response to a request
        with a body (-d, --json, -F) is held in memory before it is written. With -o the body
        (or -O, named after the URL) is streamed to a file, created with mode 0644 minus the
        umask, with one progress bar on a terminal and no progress at all when standard error is
        a pipe or a file (-s turns it off everywhere). With -C (or -C -) the download is
        resumable: its bytes
        are kept in the download store (default \(DownloadStore.defaultDirectory.path)), and running
        the same command again, after Ctrl-C, a crash or a lost connection, continues from them;
        once it is complete, running it again downloads nothing (a Range request answered with
        416 confirms that the file is whole, as with curl -C -).

        Cache: --cache DIR turns on Courier's HTTP cache (RFC 9111) for the command, stored in
        DIR (created if needed, 250 MiB at most, the least recently used entries removed first):
        a fresh stored response is served without a request, a stale one is revalidated with
        If-None-Match / If-Modified-Since, and cacheable responses are stored for the next run.
        Entries are written crash-safely, so a run killed midway never leaves a torn entry.
        With -v, a '* cache: ...' line says what the cache did: 'miss (network)', 'hit',
        'revalidated (304)', or 'hit, stale (reason)'.

        Heads: -v prints the request head as sent ('> GET /path HTTP/1.1', Host, Accept,
        User-Agent and every other header) and the response head ('< HTTP/1.1 200 OK'...) to
        standard error; -i prints the response head to standard output before the body; -I
        sends HEAD and prints the head. Errors read like curl's, with curl's exit code in
        parentheses: 'courier: (6) Could not resolve host: example.invalid'; -v adds the
        transport's own words on a 'courier: details:' line. -s hides errors and progress, -S
        brings errors back. -f/--fail exits with 22 on a status of 400 or more. --retry N
        retries timeouts, lost connections and 408, 429, 500, 502, 503, 504 (GET, HEAD, PUT,
        DELETE...; after the last retry such a status exits with 22).

        Bodies: -d DATA sends DATA as it is (Content-Type: application/x-www-form-urlencoded
        unless -H sets one); -d @FILE streams FILE (application/octet-stream); --json checks
        its argument is JSON and sends it as application/json; -F builds a multipart form, and
        -F name=@FILE streams the file as a file part. Only one kind of body per request.

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

    private static var writeOut: String {
        """
        Write-out (-w FORMAT), printed to standard output after the body; \\n, \\t and %% work:
          %{http_code}  %{size_download}  %{size_upload}  %{time_total}  %{time_starttransfer}
          %{url_effective}  %{content_type}  %{num_redirects}  %{http_version}  %{remote_ip}
          %{exitcode}  %{errormsg}
        """
    }

    private static var examples: String {
        """
        Examples:
          courier https://api.example.com/users/42
          courier -v --fail https://api.example.com/health
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
