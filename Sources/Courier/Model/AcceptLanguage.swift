import Foundation

/// The `Accept-Language` Courier sends by default, from what the process's locale says.
///
/// On Linux the locale is the environment's: `LC_ALL`, else `LC_MESSAGES`, else `LANG` (the POSIX
/// order for the language of messages), with GNU `LANGUAGE` adding fallbacks when the locale is
/// not C. A C or POSIX locale (or none) names no language, so nothing is sent: a made-up `en-001`
/// would tell servers something the user never said. On Apple platforms the user's preferred
/// languages are used.
enum AcceptLanguage {
    /// The header value for this process, or nil when the locale names no language.
    static let processValue: String? = {
        #if os(Linux)
        return value(environment: ProcessInfo.processInfo.environment)
        #else
        return value(languages: Locale.preferredLanguages)
        #endif
    }()

    /// The value for a POSIX locale environment; nil for C, POSIX or no locale.
    ///
    /// `LANG=de_DE.UTF-8` gives `de-DE`; `LANGUAGE=fr:en` with `LANG=fr_FR.UTF-8` gives
    /// `fr, en;q=0.9`.
    static func value(environment: [String: String]) -> String? {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let locale, let primary = tag(fromLocale: locale) else { return nil }
        // gettext ignores LANGUAGE under the C locale; so does this.
        var languages = (environment["LANGUAGE"] ?? "").split(separator: ":").compactMap { tag(fromLocale: String($0)) }
        if languages.isEmpty { languages = [primary] }
        return value(languages: languages)
    }

    /// `a, b;q=0.9, c;q=0.8`: at most six languages, duplicates removed; nil for none.
    static func value(languages: [String]) -> String? {
        var seen = Set<String>()
        let unique = languages.filter { seen.insert($0.lowercased()).inserted }.prefix(6)
        guard !unique.isEmpty else { return nil }
        return unique.enumerated().map { index, language in
            index == 0 ? language : "\(language);q=\(String(format: "%.1f", 1.0 - Double(index) * 0.1))"
        }.joined(separator: ", ")
    }

    /// The BCP 47 tag of a POSIX locale name (`en_GB.UTF-8@euro` → `en-GB`); nil for C, POSIX
    /// and names that are not a language.
    static func tag(fromLocale name: String) -> String? {
        let base = name.prefix { $0 != "." && $0 != "@" }
        guard !base.isEmpty, base != "C", base != "POSIX" else { return nil }
        let parts = base.split(separator: "_", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return nil
        }
        guard parts.count == 2, let region = parts.last, !region.isEmpty,
            region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else {
            return parts.count == 1 ? language.lowercased() : nil
        }
        return "\(language.lowercased())-\(region.uppercased())"
    }
}
