/// `-K/--config FILE`: curl's config-file syntax, turned into the command-line arguments it stands for.
///
/// One option per line: `--name value`, `-x value`, or a long name without dashes followed by
/// white space, `=` or `:` and the value (`user-agent = "courier test"`, `url: https://...`). A value
/// with white space (or starting with `=` or `:`) is double-quoted, where `\\`, `\"`, `\t`, `\n`,
/// `\r` and `\v` are escapes and a backslash before anything else is dropped; an unquoted value ends
/// at the first white space. Lines whose first non-blank character is `#` are comments. A flag's
/// line has no value (one given anyway is ignored with a warning, as curl does).
enum ConfigFile {
    /// The arguments `text` stands for, checked against `options` (to know which take a value);
    /// `name` is the file's name in messages, `warn` receives warnings.
    ///
    /// - Throws: ``UsageError`` for an option without its value or an unterminated quote.
    static func arguments(
        _ text: String, name: String, options: [OptionSpec], warn: (String) -> Void = { _ in }
    ) throws(UsageError) -> [String] {
        var arguments: [String] = []
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.first == "#" { continue }
            let place = "\(name):\(number + 1)"
            let dashed = line.first == "-"
            let isSeparator: (Character) -> Bool = { !dashed && ($0 == "=" || $0 == ":") }
            let optionEnd = line.firstIndex { $0 == " " || $0 == "\t" || isSeparator($0) } ?? line.endIndex
            let option = String(line[..<optionEnd])
            let rest = line[optionEnd...].drop { $0 == " " || $0 == "\t" || isSeparator($0) }
            let value = try parameter(rest, at: place)
            let spec = lookUp(option, dashed: dashed, in: options)
            guard let spec else {
                // The parser names the unknown option (with a suggestion) as it would on the command line.
                arguments.append(dashed ? option : "--" + option)
                if let value { arguments.append(value) }
                continue
            }
            let spelled = dashed && !option.hasPrefix("--") ? option : "--" + spec.long
            if spec.takesValue {
                guard let value else { throw UsageError("\(place): option \(spec.displayName) needs a value") }
                arguments += [spelled, value]
            } else if spec.optionalValue != nil, let value {
                arguments.append("--\(spec.long)=\(value)")
            } else {
                if let value { warn("courier: warning: \(place): \(spec.displayName) takes no value; '\(value)' ignored") }
                arguments.append(spelled)
            }
        }
        return arguments
    }

    /// The option a config line names: `--name`, `-x`, or a bare long name.
    private static func lookUp(_ option: String, dashed: Bool, in options: [OptionSpec]) -> OptionSpec? {
        if option.hasPrefix("--") { return options.first { $0.isNamed(String(option.dropFirst(2))) } }
        if dashed {
            guard option.count == 2, let letter = option.last else { return nil }
            return options.first { $0.short == letter }
        }
        return options.first { $0.isNamed(option) }
    }

    /// The value after the option: quoted (with escapes) or up to the first white space; nil when none.
    private static func parameter(_ text: Substring, at place: String) throws(UsageError) -> String? {
        guard let first = text.first else { return nil }
        guard first == "\"" else {
            let word = text.prefix { $0 != " " && $0 != "\t" }
            return String(word)
        }
        var value = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            switch character {
            case "\"":
                return value
            case "\\":
                guard index < text.endIndex else { continue }
                let escaped = text[index]
                index = text.index(after: index)
                switch escaped {
                case "t": value.append("\t")
                case "n": value.append("\n")
                case "r": value.append("\r")
                case "v": value.append("\u{0B}")
                default: value.append(escaped)
                }
            default:
                value.append(character)
            }
        }
        throw UsageError("\(place): a quoted value has no closing '\"'")
    }
}
