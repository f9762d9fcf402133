import Foundation

extension MockResponse {
    /// 200 with a JSON description of `request` (`Content-Type: application/json`):
    /// ```json
    /// {"method":"POST","target":"/echo?a=1","path":"/echo","query":{"a":"1"},
    ///  "headers":[["Host","127.0.0.1:8080"]],"body":"hi","bodyLength":2}
    /// ```
    /// The body appears as a string under `body` when it is valid UTF-8, otherwise base64-encoded
    /// under `bodyBase64`. Keys are written in the order shown, query keys sorted.
    public static func echo(_ request: RecordedRequest) -> MockResponse {
        var json = "{"
        json += "\"method\":\(jsonString(request.method)),"
        json += "\"target\":\(jsonString(request.target)),"
        json += "\"path\":\(jsonString(request.path)),"
        let query = request.query.keys.sorted().map { "\(jsonString($0)):\(jsonString(request.query[$0] ?? ""))" }
        json += "\"query\":{\(query.joined(separator: ","))},"
        let headers = request.headers.map { "[\(jsonString($0.name)),\(jsonString($0.value))]" }
        json += "\"headers\":[\(headers.joined(separator: ","))],"
        if let text = String(validating: request.body, as: UTF8.self) {
            json += "\"body\":\(jsonString(text)),"
        } else {
            json += "\"bodyBase64\":\(jsonString(request.body.base64EncodedString())),"
        }
        json += "\"bodyLength\":\(request.bodySize)}"
        return .json(json)
    }

    /// `text` as a JSON string literal (RFC 8259 escaping).
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
