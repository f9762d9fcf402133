/// Courier's own file-extension → media-type table, so multipart file parts get the same
/// `Content-Type` on every platform without asking the system.
enum MIMETypes {
    /// The type used when an extension is unknown.
    static let fallback = "application/octet-stream"

    /// The media type for a file name or path extension, compared case-insensitively; unknown gives ``fallback``.
    ///
    /// Accepts `"jpg"`, `".jpg"`, or a whole name such as `"photo.JPG"`.
    static func mimeType(forPathExtension pathExtension: String) -> String {
        var key = Substring(pathExtension.lowercased())
        if let dot = key.lastIndex(of: ".") { key = key[key.index(after: dot)...] }
        return table[String(key)] ?? fallback
    }

    /// The media type for a file name, from its extension; names without one give ``fallback``.
    static func mimeType(forFileName fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return fallback }
        return mimeType(forPathExtension: String(fileName[fileName.index(after: dot)...]))
    }

    private static let table: [String: String] = [
        // Text and documents
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown", "markdown": "text/markdown",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv", "tsv": "text/tab-separated-values",
        "xml": "application/xml", "ics": "text/calendar", "vcf": "text/vcard", "rtf": "application/rtf",
        "pdf": "application/pdf", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "epub": "application/epub+zip",
        // Data and code
        "json": "application/json", "geojson": "application/geo+json", "jsonld": "application/ld+json",
        "ndjson": "application/x-ndjson", "yaml": "application/yaml", "yml": "application/yaml", "toml": "application/toml",
        "js": "text/javascript", "mjs": "text/javascript", "wasm": "application/wasm", "sql": "application/sql",
        "plist": "application/x-plist", "bin": "application/octet-stream",
        // Images
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "png": "image/png", "gif": "image/gif",
        "webp": "image/webp", "heic": "image/heic", "heif": "image/heif", "avif": "image/avif", "bmp": "image/bmp",
        "tif": "image/tiff", "tiff": "image/tiff", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
        "jxl": "image/jxl",
        // Audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav", "ogg": "audio/ogg",
        "oga": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac", "mid": "audio/midi", "midi": "audio/midi",
        "weba": "audio/webm", "caf": "audio/x-caf",
        // Video
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska",
        "avi": "video/x-msvideo", "mpeg": "video/mpeg", "mpg": "video/mpeg", "ogv": "video/ogg", "3gp": "video/3gpp",
        "ts": "video/mp2t",
        // Archives
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip", "tar": "application/x-tar",
        "bz2": "application/x-bzip2", "xz": "application/x-xz", "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar", "zst": "application/zstd",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        // Apple and mobile packages
        "ipa": "application/octet-stream", "apk": "application/vnd.android.package-archive",
    ]
}
