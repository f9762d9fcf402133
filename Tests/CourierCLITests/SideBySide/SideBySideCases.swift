import Foundation

/// The command lines run through curl and courier: the ones people type every day, against
/// nginx (plain, TLS with HTTP/2, h2c, an expired certificate), httpbin (redirects, cookies,
/// echoes, statuses), the SSE server, tinyproxy, and the suite's own CourierTestServer
/// (`{local}`: a server that ignores ranges, cookie attributes, a download name).
enum SideBySideCases {
    /// A file of text lines, for the data options.
    static let form = "a=1&b=two\nc=3\n"
    /// Cookie file in curl's format.
    static let cookieFile =
        "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tfromfile\tf1\n#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\tquiet\tq\n"
    /// The first 1000 bytes nginx's `random-1m.bin` has, for a partial download of it.
    static func partial(_ bytes: Data) -> Data { bytes.prefix(1000) }

    /// Every case, in the order of `docs/curl-compatibility.md`'s sections.
    static func all(randomFilePrefix: Data) -> [SideBySideCase] {
        requests + compression + redirects + heads + bodies + failures + files + resumes(randomFilePrefix) + transfers + cookies
            + configuration + streams + writeOut + misc
    }

    static let requests: [SideBySideCase] = [
        SideBySideCase("GET, JSON piped", ["-s", "{nginx}/small.json"]),
        SideBySideCase("GET without -s (stderr aside)", ["{nginx}/small.json"]),
        SideBySideCase("binary body piped", ["-s", "{nginx}/random-1m.bin"]),
        SideBySideCase("HTTPS, HTTP/2, a private CA", ["-s", "--cacert", "{ca}", "{nginxTLS}/small.json"]),
        SideBySideCase("HTTPS over HTTP/1.1", ["-s", "--http1.1", "--cacert", "{ca}", "{nginxTLS}/small.json"]),
        SideBySideCase("-k", ["-sk", "{nginxTLS}/small.json"]),
        SideBySideCase("an expired certificate: 60", ["-s", "--cacert", "{ca}", "{expired}/small.json"]),
        SideBySideCase("h2c with prior knowledge", ["-s", "--http2-prior-knowledge", "{h2c}/small.json"]),
        SideBySideCase("connection refused: 7", ["-s", "http://127.0.0.1:1/"]),
        SideBySideCase("unknown host: 6", ["-s", "http://courier-side-by-side.invalid/"]),
        SideBySideCase("unsupported protocol: 1", ["-s", "htp://127.0.0.1/"]),
        SideBySideCase("the default User-Agent", ["-s", "{httpbin}/headers"]).differing(.userAgent),
        SideBySideCase("-A, -e, -H", ["-s", "-A", "sbs", "-e", "http://ref.example/", "-H", "X-A: 1", "-H", "X-Empty;", "{httpbin}/headers"]),
        SideBySideCase("-A '' sends none", ["-s", "-A", "", "{httpbin}/headers"]),
        SideBySideCase("-H 'Name:' removes a header", ["-s", "-A", "sbs", "-H", "User-Agent:", "{httpbin}/headers"]),
        SideBySideCase("-u USER:PASSWORD", ["-s", "-u", "ada:pw", "{httpbin}/basic-auth/ada/pw"]),
        SideBySideCase("--oauth2-bearer", ["-s", "--oauth2-bearer", "t0k", "{httpbin}/bearer"]),
        SideBySideCase("-r", ["-s", "-r", "0-99", "{nginx}/text-1m.txt"]),
        SideBySideCase("-x through tinyproxy", ["-s", "-w", "%header{via}", "-x", "{proxy}", "{nginx}/small.json"]).needing("proxy"),
        SideBySideCase("http_proxy from the environment", ["-s", "-o", "/dev/null", "-w", "%header{via}", "{nginx}/small.json"]).needing("proxy")
            .environment(["http_proxy": "{proxy}"]),
        SideBySideCase("--noproxy over http_proxy", ["-s", "--noproxy", "127.0.0.1", "-w", "%header{via}", "{nginx}/small.json"]).needing("proxy")
            .environment(["http_proxy": "{proxy}"]),
        SideBySideCase("-x '' over http_proxy", ["-s", "-x", "", "-w", "[%header{via}]", "{nginx}/small.json"]).needing("proxy")
            .environment(["http_proxy": "{proxy}"]),
    ]

    static let compression: [SideBySideCase] = [
        SideBySideCase("no --compressed: nothing asked, nothing decoded", ["-s", "-A", "sbs", "{httpbin}/headers"]),
        SideBySideCase("--compressed asks like curl", ["-s", "-A", "sbs", "--compressed", "{httpbin}/headers"]),
        SideBySideCase("--compressed decodes", ["-s", "--compressed", "{nginx}/text-1m.txt"]),
        SideBySideCase("gzip asked by -H stays gzip", ["-s", "-H", "Accept-Encoding: gzip", "{nginx}/text-1m.txt"]),
        SideBySideCase(
            "%{size_download} with --compressed", ["-s", "--compressed", "-o", "/dev/null", "-w", "%{size_download}", "{nginx}/text-1m.txt"]
        ).differing(.decodedSizeDownload),
    ]

    static let redirects: [SideBySideCase] = [
        SideBySideCase("no -L: the 302 is the answer", ["-s", "{httpbin}/redirect/2"]),
        SideBySideCase("-L", ["-sL", "-A", "sbs", "{httpbin}/redirect/2"]),
        SideBySideCase("-L --max-redirs: 47", ["-sL", "--max-redirs", "1", "{httpbin}/redirect/3"]),
        SideBySideCase("-L and relative redirects", ["-sL", "-A", "sbs", "{httpbin}/relative-redirect/2"]),
        SideBySideCase(
            "%{redirect_url} without -L", ["-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url} %{num_redirects}", "{httpbin}/redirect/1"]),
        SideBySideCase(
            "%{url_effective} with -L",
            ["-sL", "-o", "/dev/null", "-w", "%{http_code} %{url_effective} %{num_redirects}", "{httpbin}/redirect/2"]),
        SideBySideCase("--proto-redir refuses http: 1", ["-sL", "--proto-redir", "=https", "{httpbin}/redirect-to?url={nginx}/small.json"]),
        SideBySideCase("--proto =https: 1", ["-s", "--proto", "=https", "{nginx}/small.json"]),
        SideBySideCase(
            "-u is not sent to another host", ["-sL", "-u", "ada:pw", "{httpbin}/redirect-to?url={httpbinLocalhost}/basic-auth/ada/pw"]),
        SideBySideCase(
            "--location-trusted sends it",
            ["-s", "--location-trusted", "-u", "ada:pw", "{httpbin}/redirect-to?url={httpbinLocalhost}/basic-auth/ada/pw"]),
        SideBySideCase("-e ';auto'", ["-sL", "-A", "sbs", "-e", ";auto", "{httpbin}/redirect-to?url=/headers"]),
    ]

    static let heads: [SideBySideCase] = [
        SideBySideCase("-i", ["-si", "{nginx}/small.json"]).heads(.standardOutput),
        SideBySideCase("-I", ["-sI", "{nginx}/small.json"]).heads(.standardOutput),
        SideBySideCase("-I on a 302, no -L: one head", ["-sI", "{httpbin}/redirect/1"]).heads(.standardOutput).differing(.reasonPhrase),
        SideBySideCase("-IL: every head", ["-sIL", "-A", "sbs", "{httpbin}/redirect/1"]).heads(.standardOutput).differing(.reasonPhrase),
        SideBySideCase("-i over HTTP/2", ["-si", "--cacert", "{ca}", "{nginxTLS}/small.json"]).heads(.standardOutput),
        SideBySideCase("-D -", ["-s", "-D", "-", "-o", "/dev/null", "{nginx}/small.json"]).heads(.standardOutput),
        SideBySideCase("-D FILE", ["-s", "-D", "heads.txt", "{nginx}/small.json"]).heads(.file("heads.txt")),
        SideBySideCase("-i -o FILE: the head goes into the file", ["-s", "-i", "-o", "out.txt", "{nginx}/small.json"]).heads(
            .file("out.txt")
        ),
        SideBySideCase("-i and repeated Set-Cookie", ["-si", "{httpbin}/response-headers?Set-Cookie=a%3D1&Set-Cookie=b%3D2"]).heads(
            .standardOutput
        ),
        SideBySideCase("-v", ["-sv", "-A", "sbs", "{nginx}/small.json"]).heads(.verbose),
        SideBySideCase("-v over TLS and HTTP/2", ["-sv", "-A", "sbs", "--cacert", "{ca}", "{nginxTLS}/small.json"]).heads(.verbose),
        SideBySideCase("-v, the default User-Agent", ["-sv", "{nginx}/small.json"]).heads(.verbose).differing(.userAgent),
        SideBySideCase("-v -L", ["-svL", "-A", "sbs", "{httpbin}/redirect/1"]).heads(.verbose),
        SideBySideCase("-v and no connection: no request head", ["-sv", "http://127.0.0.1:1/"]).heads(.verbose),
    ]

    static let bodies: [SideBySideCase] = [
        SideBySideCase("-d twice", ["-s", "-A", "sbs", "-d", "a=1", "-d", "b=2", "{httpbin}/post"]),
        SideBySideCase("-d @FILE loses its line breaks", ["-s", "-A", "sbs", "-d", "@form.txt", "{httpbin}/post"]).file("form.txt", form),
        SideBySideCase("--data-binary @FILE keeps them", ["-s", "-A", "sbs", "--data-binary", "@form.txt", "{httpbin}/post"]).file(
            "form.txt", form),
        SideBySideCase("-d @FILE of binary bytes", ["-s", "-A", "sbs", "-d", "@bytes.bin", "{httpbin}/post"]).file(
            "bytes.bin", Data([0, 1, 2, 0xFF, 10])
        ).differing(.binaryDataRefused),
        SideBySideCase("--data-raw '@'", ["-s", "-A", "sbs", "--data-raw", "@not-a-file", "{httpbin}/post"]),
        SideBySideCase(
            "--data-urlencode", ["-s", "-A", "sbs", "--data-urlencode", "q=a b&c~*", "--data-urlencode", "n@form.txt", "{httpbin}/post"]
        ).file("form.txt", form),
        SideBySideCase("-G", ["-s", "-A", "sbs", "-G", "-d", "q=1", "--data-urlencode", "r=a b", "{httpbin}/get"]),
        SideBySideCase("--json", ["-s", "-A", "sbs", "--json", #"{"nick":"ada"}"#, "{httpbin}/post"]),
        SideBySideCase("--json @FILE", ["-s", "-A", "sbs", "--json", "@body.json", "{httpbin}/post"]).file("body.json", #"{"level": 7}"# + "\n"),
        SideBySideCase("--json that is not JSON", ["-s", "-A", "sbs", "--json", "{nope", "{httpbin}/post"]).differing(.jsonChecked),
        SideBySideCase("-X PUT -d", ["-s", "-A", "sbs", "-X", "PUT", "-d", "x=1", "{httpbin}/put"]),
        SideBySideCase("-T FILE", ["-s", "-A", "sbs", "-T", "form.txt", "{httpbin}/put"]).file("form.txt", form).differing(.expectContinue),
        SideBySideCase("-T - (stdin)", ["-s", "-A", "sbs", "-T", "-", "{httpbin}/put"]).input(form).differing(.expectContinue),
        SideBySideCase("-F", ["-s", "-A", "sbs", "-F", "a=1", "-F", "f=@form.txt", "{httpbin}/post"]).file("form.txt", form).differing(
            .multipartBoundary),
    ]

    static let failures: [SideBySideCase] = [
        SideBySideCase("-f on 404: 22", ["-sf", "{httpbin}/status/404"]),
        SideBySideCase("no -f: a 503 is the answer", ["-s", "{httpbin}/status/503"]),
        SideBySideCase("--fail-with-body", ["-s", "--fail-with-body", "{httpbin}/status/418"]),
        SideBySideCase("-i -f: the head, then 22", ["-sif", "{httpbin}/status/404"]).heads(.standardOutput).differing(.reasonPhrase),
        SideBySideCase("-m: 28", ["-s", "-m", "1", "{httpbin}/delay/5"]),
        SideBySideCase("--max-filesize: 63", ["-s", "--max-filesize", "100", "{nginx}/text-1m.txt"]),
        SideBySideCase("--retry, still 503", ["-s", "--retry", "1", "--retry-delay", "0", "{httpbin}/status/503"]).differing(.retryGivesUp22),
    ]

    static let files: [SideBySideCase] = [
        SideBySideCase("-o FILE", ["-s", "-o", "out.json", "{nginx}/small.json"]),
        SideBySideCase("-O", ["-s", "-O", "{nginx}/random-1m.bin"]),
        SideBySideCase("-o and -O, one per URL", ["-s", "-O", "{nginx}/small.json", "-o", "text.txt", "{nginx}/text-1m.txt"]),
        SideBySideCase("--output-dir --create-dirs", ["-s", "--output-dir", "out/deep", "--create-dirs", "-O", "{nginx}/small.json"]),
        SideBySideCase("-J -O", ["-s", "-J", "-O", "{local}/download"]),
        SideBySideCase("-o on a 404 keeps the body", ["-s", "-o", "err.html", "{httpbin}/status/404"]),
    ]

    static func resumes(_ random: Data) -> [SideBySideCase] {
        [
            SideBySideCase("-C - on a partial FILE", ["-s", "-C", "-", "-o", "part.bin", "-w", "%{size_download}", "{nginx}/random-1m.bin"])
                .file("part.bin", partial(random)).differing(.resumeRefetchesUnproven),
            SideBySideCase("-C - on a FILE kept with -R", ["-s", "-C", "-", "-o", "part.bin", "{nginx}/random-1m.bin"]).file(
                "part.bin", partial(random), modified: -1),
            SideBySideCase("-C OFFSET", ["-s", "-C", "1000", "-o", "part.bin", "{nginx}/random-1m.bin"]).file("part.bin", partial(random)),
            SideBySideCase("-C - where ranges are ignored: 33", ["-s", "-C", "-", "-o", "part.bin", "{local}/norange.bin"]).file(
                "part.bin", Data(repeating: 7, count: 1000)),
            SideBySideCase("-C OFFSET where ranges are ignored: 33", ["-s", "-C", "100", "-o", "part.bin", "{local}/norange.bin"]).file(
                "part.bin", Data(repeating: 7, count: 100)),
            SideBySideCase("-C OFFSET to stdout", ["-s", "-C", "1048000", "{nginx}/random-1m.bin"]),
        ]
    }

    static let transfers: [SideBySideCase] = [
        SideBySideCase("two URLs", ["-s", "{nginx}/small.json", "{httpbin}/status/404"]),
        SideBySideCase("two URLs, the last fails", ["-s", "{nginx}/small.json", "http://127.0.0.1:1/"]),
        SideBySideCase("--fail-early", ["-s", "--fail-early", "-f", "{httpbin}/status/404", "{nginx}/small.json"]),
        SideBySideCase("--url twice", ["-s", "--url", "{nginx}/small.json", "--url", "{nginx}/small.json"]),
        SideBySideCase(
            "-w per URL",
            ["-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{urlnum} %{http_code}\\n", "{nginx}/small.json", "{httpbin}/status/201"]),
        SideBySideCase(
            "-Z --remote-name-all", ["-s", "-Z", "--remote-name-all", "{nginx}/small.json", "{nginx}/random-1m.bin", "{nginx}/text-1m.txt"]),
        SideBySideCase(
            "-Z --parallel-max 1, a failure", ["-s", "-Z", "--parallel-max", "1", "-o", "a.json", "{nginx}/small.json", "http://127.0.0.1:1/"]),
    ]

    static let cookies: [SideBySideCase] = [
        SideBySideCase("-c FILE after -L", ["-sL", "-c", "jar.txt", "{httpbin}/cookies/set?a=1&b=two"]),
        SideBySideCase("-b FILE", ["-s", "-b", "jar.txt", "{httpbin}/cookies"]).file("jar.txt", cookieFile),
        SideBySideCase("-b NAME=VALUE and a FILE", ["-s", "-A", "sbs", "-b", "jar.txt", "-b", "x=9", "{httpbin}/headers"]).file(
            "jar.txt", cookieFile),
        SideBySideCase("-b '' keeps cookies across -L", ["-sL", "-b", "", "{httpbin}/cookies/set?k=v"]),
        SideBySideCase("-j drops session cookies", ["-s", "-j", "-b", "jar.txt", "{httpbin}/cookies"]).file("jar.txt", cookieFile),
        SideBySideCase("-c - with attributes", ["-s", "-o", "/dev/null", "-c", "-", "{local}/cookies"]),
        SideBySideCase("a cookie deleted", ["-s", "-o", "/dev/null", "-b", "jar.txt", "-c", "-", "{httpbin}/cookies/delete?fromfile"]).file(
            "jar.txt", cookieFile),
    ]

    static let configuration: [SideBySideCase] = [
        SideBySideCase("-K FILE", ["-K", "curl.cfg"]).file(
            "curl.cfg", "# options, one per line\nsilent\nurl = \"{nginx}/small.json\"\n-w \"%{http_code}\\n\"\nuser-agent: \"a b\"\n"),
        SideBySideCase("-K - (stdin)", ["-K", "-", "{nginx}/small.json"]).input("--silent\nwrite-out = \"%{http_code} %{content_type}\"\n"),
        SideBySideCase("--netrc-file", ["-s", "--netrc-file", "netrc", "{httpbin}/basic-auth/ada/p%20w"]).file(
            "netrc", "machine 127.0.0.1 login ada password \"p w\"\n"),
        SideBySideCase("-n reads ~/.netrc", ["-sn", "{httpbin}/basic-auth/ada/pw"]).file(".netrc", "default login ada password pw\n"),
    ]

    static let streams: [SideBySideCase] = [
        SideBySideCase("an event stream, piped", ["-s", "{sse}/events?n=3"]),
        SideBySideCase("a static event stream, piped", ["-s", "{nginx}/ticks.sse"]),
    ]

    static let writeOut: [SideBySideCase] = [
        SideBySideCase(
            "-w variables",
            [
                "-s", "-o", "/dev/null", "-w",
                "%{http_code} %{response_code} %{content_type} %{size_download} %{scheme} %{method} %{http_version} %{remote_ip} %{remote_port} %{num_headers} %{exitcode} %{url} %header{etag} %%\\n",
                "{nginx}/small.json",
            ]),
        SideBySideCase("-w @FILE", ["-s", "-o", "/dev/null", "-w", "@format.txt", "{nginx}/small.json"]).file("format.txt", "code=%{http_code}\n"),
        SideBySideCase("-w %{stderr}", ["-s", "-o", "/dev/null", "-w", "out%{stderr}err%{stdout}out", "{nginx}/small.json"]),
        SideBySideCase("-w after a failure", ["-s", "-w", "%{http_code} %{exitcode}", "http://127.0.0.1:1/"]),
        SideBySideCase("-z: not modified since", ["-s", "-z", "Wed, 09 Jun 2100 10:18:14 GMT", "-w", "%{http_code}", "{nginx}/small.json"]),
        SideBySideCase("-z: modified since", ["-s", "-z", "Wed, 09 Jun 2000 10:18:14 GMT", "-w", "%{http_code}", "{nginx}/small.json"]),
    ]

    static let misc: [SideBySideCase] = [
        SideBySideCase("--version", ["--version"]).versionOutput().differing(.versionProtocols),
        SideBySideCase("--limit-rate", ["-s", "--limit-rate", "2M", "-o", "/dev/null", "-w", "%{size_download}", "{nginx}/random-1m.bin"]),
        SideBySideCase("-s -S on an error", ["-sS", "http://127.0.0.1:1/"]),
    ]
}
