/// `--proto` and `--proto-redir`: curl's protocol lists (`=https`, `-all,+https`, `http,https`).
enum ProtocolList {
    /// The protocols courier knows, for `all`.
    static let known: Set<String> = ["http", "https"]

    /// The set a list leaves allowed, starting from every protocol (or from none after `=`).
    static func parse(_ text: String, option: String) throws(UsageError) -> Set<String> {
        var allowed = known
        for raw in text.split(separator: ",") {
            var word = Substring(raw.trimmingCharacters(in: .whitespaces))
            var action: Character = "+"
            while let first = word.first, "+-=".contains(first) {
                action = first
                word = word.dropFirst()
            }
            let names: Set<String> = word.lowercased() == "all" ? known : [word.lowercased()]
            switch action {
            case "=": allowed = names.intersection(known)
            case "-": allowed.subtract(names)
            default: allowed.formUnion(names.intersection(known))
            }
        }
        return allowed
    }
}
