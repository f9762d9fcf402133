/// What a command line said, before a command gives it meaning: options by id, in the order
/// given, and the positional arguments.
struct ParsedArguments: Equatable, Sendable {
    /// `(id, value)` for every option given, in order; flags have a nil value.
    var options: [Occurrence] = []
    /// The arguments that are not options, in order.
    var positionals: [String] = []

    /// One option as given.
    struct Occurrence: Equatable, Sendable {
        let id: String
        let value: String?
    }

    /// Every value given for the option `id`, in order.
    func values(_ id: String) -> [String] {
        options.filter { $0.id == id }.compactMap(\.value)
    }

    /// The value given for `id`, if any (options that take a value and are not repeatable appear at most once).
    func value(_ id: String) -> String? {
        values(id).last
    }

    /// Whether the flag (or option) `id` was given.
    func has(_ id: String) -> Bool {
        options.contains { $0.id == id }
    }
}

/// A small, strict command-line parser: `-x`, `-x VALUE`, `-xVALUE`, grouped flags (`-vC`),
/// `--name`, `--name VALUE`, `--name=VALUE`, and `--` to end options. Anything else starting with
/// `-` (except `-` alone) is an unknown option.
enum ArgumentParser {
    /// Parses `arguments` against `options`.
    ///
    /// - Throws: ``UsageError`` for an unknown option (with a suggestion when one is close), a
    ///   missing value, a value given to a flag, or a non-repeatable option given twice.
    ///
    /// An option whose ``OptionSpec/expandsInPlace`` is set (`-K/--config FILE`) is replaced by the
    /// arguments `expand` makes of its value, parsed where it stood, as curl reads a config file.
    static func parse(
        _ arguments: [String], options: [OptionSpec], command: String?,
        expand: ((String) throws(UsageError) -> [String])? = nil
    ) throws(UsageError) -> ParsedArguments {
        var arguments = arguments
        var expansions = 0
        var parsed = ParsedArguments()
        var index = 0
        func takeValue(for option: OptionSpec, attached: String?) throws(UsageError) -> String {
            if let attached { return attached }
            index += 1
            guard index < arguments.count else {
                throw UsageError("option \(option.displayName) needs a value (\(option.valueName ?? "VALUE"))", command: command)
            }
            return arguments[index]
        }
        func record(_ option: OptionSpec, _ value: String?) throws(UsageError) {
            if option.expandsInPlace, let expand, let value {
                expansions += 1
                guard expansions <= 32 else {
                    throw UsageError("\(option.displayName): more than 32 config files (does one read itself?)", command: command)
                }
                arguments.insert(contentsOf: try expand(value), at: index + 1)
                return
            }
            if option.takesValue, !option.repeatable, parsed.has(option.id) {
                throw UsageError("option \(option.displayName) was given more than once", command: command)
            }
            parsed.options.append(.init(id: option.id, value: value))
        }

        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                parsed.positionals.append(contentsOf: arguments[(index + 1)...])
                break
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let equals = body.firstIndex(of: "=")
                let name = String(body[..<(equals ?? body.endIndex)])
                let attached = equals.map { String(body[body.index(after: $0)...]) }
                guard let option = options.first(where: { $0.isNamed(name) }) else {
                    throw unknown("--\(name)", options: options, command: command)
                }
                if let accepts = option.optionalValue {
                    if attached == nil, index + 1 < arguments.count, accepts(arguments[index + 1]) {
                        index += 1
                        try record(option, arguments[index])
                    } else {
                        try record(option, attached)
                    }
                } else if option.takesValue {
                    try record(option, try takeValue(for: option, attached: attached))
                } else {
                    if attached != nil {
                        throw UsageError("option --\(name) takes no value", command: command)
                    }
                    try record(option, nil)
                }
            } else if argument.hasPrefix("-"), argument.count > 1 {
                var letters = Substring(argument.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    guard let option = options.first(where: { $0.short == letter }) else {
                        throw unknown("-\(letter)", options: options, command: command)
                    }
                    if let accepts = option.optionalValue {
                        if !letters.isEmpty, accepts(String(letters)) {
                            try record(option, String(letters))
                            break
                        }
                        if letters.isEmpty, index + 1 < arguments.count, accepts(arguments[index + 1]) {
                            index += 1
                            try record(option, arguments[index])
                        } else {
                            try record(option, nil)
                        }
                        continue
                    }
                    if option.takesValue {
                        try record(option, try takeValue(for: option, attached: letters.isEmpty ? nil : String(letters)))
                        break
                    }
                    try record(option, nil)
                }
            } else {
                parsed.positionals.append(argument)
            }
            index += 1
        }
        return parsed
    }

    /// "unknown option" with a "did you mean" suggestion for a long name within two edits (one for
    /// names shorter than four letters).
    private static func unknown(_ given: String, options: [OptionSpec], command: String?) -> UsageError {
        var message = "unknown option '\(given)'"
        if given.hasPrefix("--") {
            let name = String(given.dropFirst(2))
            let closest = options.map { ($0.long, editDistance(name, $0.long)) }.min { $0.1 < $1.1 }
            if let closest, closest.1 <= (name.count >= 4 ? 2 : 1) { message += " (did you mean '--\(closest.0)'?)" }
        }
        return UsageError(message, command: command)
    }

    /// The Levenshtein distance between two short strings.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs), b = Array(rhs)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
