import CourierSupport
/// `courier --generate-completion-script bash|zsh|fish`: shell completion for the commands and
/// every option, built from the same option table as `--help`, so the two cannot drift apart.
///
/// Install, for example:
/// - bash: `courier --generate-completion-script bash > /etc/bash_completion.d/courier`
///   (or `source <(courier --generate-completion-script bash)` in `~/.bashrc`);
/// - zsh: `courier --generate-completion-script zsh > "${fpath[1]}/_courier"`;
/// - fish: `courier --generate-completion-script fish > ~/.config/fish/completions/courier.fish`.
enum CompletionScript {
    /// The shells scripts are generated for.
    enum Shell: String, CaseIterable, Sendable {
        case bash
        case zsh
        case fish
    }

    /// What an option's value completes to.
    enum ValueKind: Equatable {
        /// The option is a flag.
        case none
        /// A file name.
        case file
        /// A directory name.
        case directory
        /// One of these words.
        case words([String])
        /// Free text: nothing to complete.
        case text
    }

    /// The first words `courier` accepts besides a URL.
    static let commands = ["demo", "help", "fetch"]
    /// The methods offered as the first word and after `-X`.
    static let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

    /// The options to complete: the request options, the WebSocket's own, and the top-level ones.
    static var options: [OptionSpec] {
        FetchOptions.options + WebSocketOptions.ownOptions + [
            OptionSpec("version", short: "V", long: "version", help: "print the version"),
            OptionSpec(
                "generate-completion-script", long: "generate-completion-script", value: "bash|zsh|fish",
                help: "print a shell completion script"),
        ]
    }

    /// What `option`'s value completes to.
    static func valueKind(_ option: OptionSpec) -> ValueKind {
        guard option.takesValue else { return .none }
        switch option.id {
        case "output", "cacert", "cert", "key", "data", "data-binary", "upload-file", "cookie", "cookie-jar", "dump-header",
            "netrc-file", "config":
            return .file
        case "capath", "store", "cache", "output-dir": return .directory
        case "transport": return .words(TransportName.allCases.map(\.rawValue))
        case "cert-type": return .words(["PEM", "P12"])
        case "request": return .words(methods)
        case "generate-completion-script": return .words(Shell.allCases.map(\.rawValue))
        default: return .text
        }
    }

    /// The script for `shell`.
    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash
        case .zsh: zsh
        case .fish: fish
        }
    }

    /// Every spelling of `option`: `-H`, `--header` and the aliases.
    private static func spellings(_ option: OptionSpec) -> [String] {
        (option.short.map { ["-\($0)"] } ?? []) + (["--\(option.long)"] + option.aliases.map { "--\($0)" })
    }

    // MARK: bash

    private static var bash: String {
        var cases: [String] = []
        let groups: [(ValueKind, String)] = [
            (.file, #"COMPREPLY=( $(compgen -f -- "$cur") )"#),
            (.directory, #"COMPREPLY=( $(compgen -d -- "$cur") )"#),
            (.text, "COMPREPLY=()"),
        ]
        for (kind, action) in groups {
            let names = options.filter { valueKind($0) == kind }.flatMap(spellings)
            if !names.isEmpty { cases.append("        \(names.joined(separator: "|"))) \(action); return ;;") }
        }
        for option in options {
            if case .words(let words) = valueKind(option) {
                cases.append(
                    "        \(spellings(option).joined(separator: "|"))) "
                        + #"COMPREPLY=( $(compgen -W ""# + words.joined(separator: " ") + #"" -- "$cur") ); return ;;"#)
            }
        }
        let all = options.flatMap(spellings).joined(separator: " ")
        return """
            # bash completion for courier (courier --generate-completion-script bash)
            _courier() {
                local cur prev
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                case "$prev" in
            \(cases.joined(separator: "\n"))
                esac
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=( $(compgen -W "\(all)" -- "$cur") )
                elif [[ $COMP_CWORD -eq 1 ]]; then
                    COMPREPLY=( $(compgen -W "\((commands + methods).joined(separator: " "))" -- "$cur") )
                fi
            }
            complete -o default -o bashdefault -F _courier courier

            """
    }

    // MARK: zsh

    private static var zsh: String {
        let specs = options.map { option -> String in
            let help = zshEscaped(option.help)
            let action: String
            switch valueKind(option) {
            case .none: action = ""
            case .file: action = ":file:_files"
            case .directory: action = ":directory:_files -/"
            case .text: action = ":\(zshEscaped(option.valueName ?? "value")): "
            case .words(let words): action = ":\(zshEscaped(option.valueName ?? "value")):(\(words.joined(separator: " ")))"
            }
            let names = spellings(option)
            let repeated = option.repeatable ? "*" : ""
            let exclusion = names.count > 1 && !option.repeatable ? "(\(names.joined(separator: " ")))" : ""
            let body = "[\(help)]\(action)"
            if names.count == 1 { return "    '\(repeated)\(names[0])\(body)'" }
            // Quoted: with EXTENDED_GLOB (on in completion functions) an unquoted `-#` is a pattern.
            return "    '\(exclusion)\(repeated)'{\(names.map { "'\($0)'" }.joined(separator: ","))}'\(body)'"
        }
        return """
            #compdef courier
            # zsh completion for courier (courier --generate-completion-script zsh)
            _courier() {
              _arguments -s \\
            \(specs.joined(separator: " \\\n")) \\
                '1:command, method or URL:(\((commands + methods).joined(separator: " ")))' \\
                '*:URL or item:_urls'
            }
            if [ "$funcstack[1]" = "_courier" ]; then
              _courier "$@"
            else
              compdef _courier courier
            fi

            """
    }

    /// Help text safe inside `'...[HELP]...'` of an `_arguments` spec.
    private static func zshEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "'": result += "'\\''"
            case "[", "]": result += "\\\(character)"
            case ":": result += "\\:"
            default: result.append(character)
            }
        }
        return result
    }

    // MARK: fish

    private static var fish: String {
        var lines = [
            "# fish completion for courier (courier --generate-completion-script fish)",
            "complete -c courier -f",
            "complete -c courier -n __fish_use_subcommand -a '\((commands + methods).joined(separator: " "))'",
        ]
        for option in options {
            var line = "complete -c courier"
            if let short = option.short { line += " -s '\(short)'" }
            line += " -l \(option.long)"
            switch valueKind(option) {
            case .none: break
            case .file: line += " -r -F"
            case .directory: line += " -r -a '(__fish_complete_directories)'"
            case .text: line += " -x"
            case .words(let words): line += " -x -a '\(words.joined(separator: " "))'"
            }
            line += " -d '\(fishEscaped(option.help))'"
            lines.append(line)
            for alias in option.aliases {
                lines.append("complete -c courier -l \(alias)\(option.takesValue ? " -x" : "") -d '\(fishEscaped(option.help))'")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text safe inside fish single quotes.
    private static func fishEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }
}
