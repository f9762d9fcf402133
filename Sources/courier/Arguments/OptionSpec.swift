/// One option a command accepts: its names, whether it takes a value, and its help line.
struct OptionSpec: Sendable, Equatable {
    /// The key the parsed value is stored under, e.g. `"header"`.
    let id: String
    /// The one-letter name used as `-x`, if any.
    let short: Character?
    /// The long name used as `--name`.
    let long: String
    /// The value's placeholder in help (e.g. `FILE`); nil for a flag, which takes no value.
    let valueName: String?
    /// Whether the option may be given several times (values accumulate in order).
    let repeatable: Bool
    /// One line of help.
    let help: String
    /// Other long names accepted for the option (not shown in help), e.g. `max-redirects`.
    let aliases: [String]
    /// For a flag whose value is optional (`-C` or `-C -`): whether the next argument is its
    /// value. A value attached to the flag (`-C-`, `--continue-at=-`) is always taken.
    let optionalValue: (@Sendable (String) -> Bool)?
    /// Whether the option stands for other arguments, which the parser reads in its place
    /// (`-K/--config FILE`).
    let expandsInPlace: Bool

    init(
        _ id: String, short: Character? = nil, long: String, aliases: [String] = [], value valueName: String? = nil,
        repeatable: Bool = false, optionalValue: (@Sendable (String) -> Bool)? = nil, expandsInPlace: Bool = false,
        help: String
    ) {
        self.expandsInPlace = expandsInPlace
        self.id = id
        self.short = short
        self.long = long
        self.aliases = aliases
        self.valueName = valueName
        self.repeatable = repeatable
        self.optionalValue = optionalValue
        self.help = help
    }

    static func == (lhs: OptionSpec, rhs: OptionSpec) -> Bool {
        lhs.id == rhs.id && lhs.short == rhs.short && lhs.long == rhs.long && lhs.aliases == rhs.aliases
            && lhs.valueName == rhs.valueName && lhs.repeatable == rhs.repeatable && lhs.help == rhs.help
            && (lhs.optionalValue == nil) == (rhs.optionalValue == nil) && lhs.expandsInPlace == rhs.expandsInPlace
    }

    /// Whether `name` (after `--`) names this option.
    func isNamed(_ name: String) -> Bool {
        long == name || aliases.contains(name)
    }

    /// Whether the option takes a value.
    var takesValue: Bool { valueName != nil }

    /// How the option is written in messages: `-H/--header` or `--json`.
    var displayName: String {
        short.map { "-\($0)/--\(long)" } ?? "--\(long)"
    }

    /// The left column of the option's help line, e.g. `-H, --header NAME: VALUE`.
    var synopsis: String {
        let names = short.map { "-\($0), --\(long)" } ?? "    --\(long)"
        return valueName.map { "\(names) \($0)" } ?? names
    }
}

/// Formats options as aligned help lines.
enum OptionHelp {
    /// The widest the synopsis column gets; a longer synopsis has its help on the next line.
    static let maximumColumn = 30

    /// One line per option: the synopsis padded to a common width, then the help text.
    static func lines(for options: [OptionSpec], indent: Int = 2) -> String {
        let width = min(options.map { $0.synopsis.count }.max() ?? 0, maximumColumn) + 2
        let pad = String(repeating: " ", count: indent)
        return options.map { option in
            guard option.synopsis.count + 2 <= width else {
                return pad + option.synopsis + "\n" + pad + String(repeating: " ", count: width) + option.help
            }
            return pad + option.synopsis + String(repeating: " ", count: width - option.synopsis.count) + option.help
        }.joined(separator: "\n")
    }
}
