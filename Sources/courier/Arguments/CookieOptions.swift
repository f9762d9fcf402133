/// `-b`, `-c` and `-j`: the cookie engine's inputs and output.
struct CookieOptions: Equatable, Sendable {
    /// Cookie files to read (`-b FILE`; `-b ''` turns the engine on with none).
    var files: [String] = []
    /// Literal `-b 'NAME=VALUE; ...'` strings, sent after the engine's cookies.
    var literal: [String] = []
    /// `-c FILE`: where every cookie is written at the end (`-` for standard output).
    var jar: String?
    /// `-j`: session cookies of the files are left out.
    var junkSessionCookies = false

    /// Whether cookies are kept and sent across redirects and URLs (a file was read or a jar is written).
    var engineOn: Bool { !files.isEmpty || jar != nil }

    init() {}

    init(_ parsed: ParsedArguments) throws(UsageError) {
        for value in parsed.values("cookie") {
            if value.contains("=") { literal.append(value) } else { files.append(value) }
        }
        jar = parsed.value("cookie-jar")
        if jar?.isEmpty == true { throw UsageError("-c/--cookie-jar needs a file name ('-' for stdout)") }
        junkSessionCookies = parsed.has("junk-session-cookies")
    }
}
