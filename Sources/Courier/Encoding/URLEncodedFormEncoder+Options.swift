extension URLEncodedFormEncoder {
    /// How member names are written.
    ///
    /// ```swift
    /// URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encodeQuery(["pageSize": 10])   // "page_size=10"
    /// ```
    public enum KeyEncoding: Sendable {
        /// As the value encodes them.
        case useDefaultKeys
        /// `pageSize` → `page_size`, `imageURL` → `image_url`.
        case convertToSnakeCase
        /// `pageSize` → `page-size`.
        case convertToKebabCase
        /// The first letter upper-cased: `pageSize` → `PageSize`.
        case capitalized
        /// `pageSize` → `PAGESIZE`.
        case uppercased
        /// `pageSize` → `pagesize`.
        case lowercased
        /// What the closure returns.
        case custom(@Sendable (String) -> String)

        /// The name written for `key`.
        public func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: key
            case .convertToSnakeCase: Self.separatingWords(key, with: "_")
            case .convertToKebabCase: Self.separatingWords(key, with: "-")
            case .capitalized: key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: key.uppercased()
            case .lowercased: key.lowercased()
            case .custom(let transform): transform(key)
            }
        }

        /// Lower-cases `key`, putting `separator` where a new word starts: an upper-case letter
        /// after a lower-case letter or digit, or the last capital of an acronym that a
        /// lower-case letter follows (`imageURLString` → `image_url_string`).
        private static func separatingWords(_ key: String, with separator: Character) -> String {
            let characters = Array(key)
            var result = ""
            result.reserveCapacity(key.utf8.count + 4)
            for (index, character) in characters.enumerated() {
                if character.isUppercase, index > 0 {
                    let previous = characters[index - 1]
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    let startsWord =
                        previous.isLowercase || previous.isNumber
                        || (previous.isUppercase && next?.isLowercase == true)
                    if startsWord, previous != separator { result.append(separator) }
                }
                result += character.lowercased()
            }
            return result
        }
    }

    /// How a nested member's name joins its parent's.
    public enum KeyPathEncoding: Sendable, Hashable {
        /// `user[name]=bob`.
        case brackets
        /// `user.name=bob`.
        case dots
    }

    /// What a `nil` value produces.
    public enum NilEncoding: Sendable, Hashable {
        /// Nothing: the key is left out.
        case dropKey
        /// The key with an empty value: `key=`.
        case dropValue
        /// The key with the value `null`: `key=null`.
        case null

        /// The value written, or `nil` when the key is left out.
        var value: String? {
            switch self {
            case .dropKey: nil
            case .dropValue: ""
            case .null: "null"
            }
        }
    }

    /// How a space is written.
    public enum SpaceEncoding: Sendable, Hashable {
        /// `%20`, which every reader decodes as a space.
        case percentEscaped
        /// `+`, as HTML forms send it (a literal `+` is still written `%2B`).
        case plusReplaced

        /// `escaped` (already percent-escaped) with its spaces written this way.
        func apply(_ escaped: String) -> String {
            // A literal "%20" in the input was escaped to "%2520", so every "%20" here is a space.
            self == .plusReplaced && escaped.contains("%20") ? escaped.replacingOccurrences(of: "%20", with: "+") : escaped
        }
    }
}
