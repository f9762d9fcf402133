/// A `.netrc` file (`-n/--netrc`, `--netrc-file`, `--netrc-optional`): the login and password of
/// each machine, read as curl reads it.
///
/// Tokens are separated by white space (newlines included): `machine NAME`, `default`, `login
/// NAME`, `password SECRET`, `account`, and `macdef NAME` (a macro, skipped to the next blank line).
/// A token may be double-quoted, with `\"`, `\\`, `\n`, `\r` and `\t` escapes, for a password with
/// spaces. The first `machine` whose name matches the host (case-insensitively) wins; `default`
/// applies to any host no `machine` names.
struct Netrc: Equatable, Sendable {
    /// One `machine` (or `default`) entry.
    struct Entry: Equatable, Sendable {
        /// The host; nil for `default`.
        var machine: String?
        var login: String?
        var password: String?
    }

    /// The entries, in the order of the file.
    let entries: [Entry]

    /// Parses the text of a netrc file.
    init(_ text: String) {
        var entries: [Entry] = []
        var tokens = Self.tokens(text)[...]
        while let token = tokens.popFirst() {
            switch token.text {
            case "machine":
                entries.append(Entry(machine: tokens.popFirst()?.text))
            case "default":
                entries.append(Entry(machine: nil))
            case "login":
                let value = tokens.popFirst()?.text
                if !entries.isEmpty { entries[entries.count - 1].login = value }
            case "password":
                let value = tokens.popFirst()?.text
                if !entries.isEmpty { entries[entries.count - 1].password = value }
            case "account":
                _ = tokens.popFirst()
            case "macdef":
                _ = tokens.popFirst()
                while let next = tokens.first, !next.afterBlankLine { tokens.removeFirst() }
            default:
                continue
            }
        }
        self.entries = entries
    }

    /// The entry for `host`: its `machine`, else `default`; nil when neither exists.
    func entry(for host: String) -> Entry? {
        entries.first { $0.machine?.lowercased() == host.lowercased() } ?? entries.first { $0.machine == nil }
    }

    /// The entry for `host` with the login `user` (when one is asked for): its password is what is wanted.
    func entry(for host: String, user: String?) -> Entry? {
        guard let user else { return entry(for: host) }
        return entries.first { $0.machine?.lowercased() == host.lowercased() && $0.login == user }
            ?? entries.first { $0.machine == nil && $0.login == user }
    }

    /// A token and whether a blank line came before it (where a `macdef` ends).
    private struct Token {
        var text: String
        var afterBlankLine: Bool
    }

    private static func tokens(_ text: String) -> [Token] {
        var tokens: [Token] = []
        var current: String?
        var quoted = false
        var escaped = false
        var newlines = 0
        var blankBefore = false
        func finish() {
            if let token = current { tokens.append(Token(text: token, afterBlankLine: blankBefore)) }
            current = nil
            blankBefore = false
        }
        for character in text {
            if quoted {
                if escaped {
                    switch character {
                    case "n": current?.append("\n")
                    case "r": current?.append("\r")
                    case "t": current?.append("\t")
                    default: current?.append(character)
                    }
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                    finish()
                } else {
                    current?.append(character)
                }
                continue
            }
            switch character {
            case " ", "\t", "\r":
                finish()
                continue
            case "\n":
                finish()
                newlines += 1
                if newlines >= 2 { blankBefore = true }
                continue
            case "\"" where current == nil:
                current = ""
                quoted = true
            default:
                current = (current ?? "") + String(character)
            }
            newlines = 0
        }
        finish()
        return tokens
    }
}
