import Foundation

// RFC 9111 §4.4: invalidating stored responses after unsafe requests.
extension HTTPCacheRules {
    /// Methods RFC 9110 §9.2.1 defines as safe (and `QUERY`); every other method, known or not,
    /// is unsafe and invalidates (§4.4).
    static let safeMethods: Set<HTTPMethod> = [.get, .head, .options, .trace, .query]

    /// The URLs whose stored responses an unsafe request's response invalidates (§4.4): when the
    /// method is unsafe and the status is non-error (2xx or 3xx), the target URI, and the
    /// `Location` and `Content-Location` URLs (relative ones resolved against the target) when
    /// they have the target's origin (scheme, host, port; §4.4 forbids others, which could be
    /// used to wipe another site's entries). Fragments are dropped; no URL is listed twice.
    func invalidatedURLs(method: HTTPMethod, requestURL: URL, statusCode: Int, responseHeaders: HTTPHeaders) -> [URL] {
        guard !Self.safeMethods.contains(method), (200...399).contains(statusCode) else { return [] }
        var urls = [Self.withoutFragment(requestURL)]
        let origin = Self.origin(of: requestURL)
        for name in ["Location", "Content-Location"] {
            guard let value = responseHeaders[name].map({ String($0.trimmedASCII) }), !value.isEmpty,
                let resolved = URL(string: value, relativeTo: requestURL)?.absoluteURL,
                origin != nil, Self.origin(of: resolved) == origin
            else { continue }
            let url = Self.withoutFragment(resolved)
            if !urls.contains(url) { urls.append(url) }
        }
        return urls
    }

    /// Scheme, host (lower-cased) and port (the scheme's default when none is given); `nil` without a host.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : scheme == "http" || scheme == "ws" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }

    private static func withoutFragment(_ url: URL) -> URL {
        guard url.fragment != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.fragment = nil
        return components.url ?? url
    }
}
