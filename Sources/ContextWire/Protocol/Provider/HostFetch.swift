#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTPS request a provider asks its host to make (`host/fetch`, provider → host, sent as a
/// JSON-RPC request through the reply callback of the request being handled; the host answers
/// by calling the provider's `call` with the JSON-RPC response; docs/provider-abi.md,
/// "Host requests"). The host checks the URL against the manifest's `network.origins`, injects
/// any secret the manifest names, and follows redirects itself.
public struct ProviderHTTPRequest: Sendable, Hashable {
    /// The method name for the provider → host request.
    public static let method = "host/fetch"
    /// The largest request body sent, in bytes.
    public static let maximumBodyBytes = 1 << 20

    /// `GET`, `POST`, `PUT`, `DELETE`, `PATCH`, `HEAD`, `OPTIONS`, `PROPFIND` or `REPORT`.
    public var method: String
    /// An `https://` URL on an origin the manifest declares.
    public var url: String
    /// Request headers, in order.
    public var headers: [(String, String)]
    /// The body, at most `maximumBodyBytes`.
    public var body: [UInt8]?
    /// Seconds for the whole fetch; capped by the manifest's `network.timeout`.
    public var timeoutSeconds: Double?

    /// A request.
    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: [UInt8]? = nil, timeoutSeconds: Double? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.timeoutSeconds == rhs.timeoutSeconds
            && lhs.headers.map { [$0.0, $0.1] } == rhs.headers.map { [$0.0, $0.1] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
    }

    /// The params: `{method, url, headers: [[name, value]], body?: base64, timeoutSeconds?}`.
    public var json: JSONValue {
        var object: JSONObject = [
            "method": .string(method), "url": .string(url),
            "headers": .array(headers.map { .array([.string($0.0), .string($0.1)]) }),
        ]
        if let body { object["body"] = .string(Base64.encode(body)) }
        if let timeoutSeconds { object["timeoutSeconds"] = .number(timeoutSeconds) }
        return .object(object)
    }

    /// Reads the params; refuses malformed headers, a body that is not Base64 or too large.
    public init(json: JSONValue, path: String = "params") throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        method = try reader.optionalString("method") ?? "GET"
        url = try reader.string("url")
        var headers: [(String, String)] = []
        if let list = reader.value("headers"), !list.isNull {
            guard let entries = list.arrayValue, entries.count <= 100 else {
                throw JSONDecodeError(path: reader.path("headers"), message: "expected a list of at most 100 [name, value] pairs")
            }
            for (index, entry) in entries.enumerated() {
                guard let pair = entry.arrayValue, pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                    throw JSONDecodeError(path: reader.path("headers") + "[\(index)]", message: "expected [name, value] strings")
                }
                headers.append((name, value))
            }
        }
        self.headers = headers
        if let text = try reader.optionalString("body") {
            guard text.utf8.count <= Base64.encodedCount(Self.maximumBodyBytes), let bytes = Base64.decode(text) else {
                throw JSONDecodeError(path: reader.path("body"), message: "expected Base64 of at most \(Self.maximumBodyBytes) bytes")
            }
            body = bytes
        } else {
            body = nil
        }
        timeoutSeconds = try reader.optionalDouble("timeoutSeconds")
        if let timeoutSeconds, !(timeoutSeconds.isFinite && timeoutSeconds > 0) {
            throw JSONDecodeError(path: reader.path("timeoutSeconds"), message: "expected a finite number > 0")
        }
    }
}

/// The host's answer to `host/fetch`: the final response after redirects.
public struct ProviderHTTPResponse: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// Response headers, names lowercased (repeated ones joined with `, `).
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]

    /// A response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// `{status, headers: {name: value}, body: base64}`.
    public var json: JSONValue {
        var names = JSONObject()
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { names[name] = .string(value) }
        return ["status": .number(Double(status)), "headers": .object(names), "body": .string(Base64.encode(body))]
    }

    /// About how many bytes `writeJSON(to:)` appends.
    package var jsonCapacity: Int {
        headers.reduce(64 + Base64.encodedCount(body.count)) { $0 + $1.key.utf8.count + $1.value.utf8.count + 8 }
    }

    /// Appends `json`'s text to `output`, the body's Base64 written straight from `body` into it
    /// (no `String` or `JSONValue` between: the host's answer to `host/fetch`).
    package func writeJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"status":"#.utf8)
        JSONWriter.appendInteger(Int64(clamping: status), to: &output)
        output.append(contentsOf: #","headers":{"#.utf8)
        for (index, (name, value)) in headers.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(name, to: &output)
            output.append(UInt8(ascii: ":"))
            JSONWriter.appendString(value, to: &output)
        }
        output.append(contentsOf: #"},"body":""#.utf8)
        Base64.append(body, to: &output)
        output.append(contentsOf: #""}"#.utf8)
    }

    /// Reads a result.
    public init(json: JSONValue, path: String = "result") throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        status = try reader.int("status")
        var headers: [String: String] = [:]
        if let object = reader.value("headers")?.objectValue {
            for (name, value) in object {
                guard let text = value.stringValue else {
                    throw JSONDecodeError(path: reader.path("headers"), message: "expected string values")
                }
                headers[name.lowercased()] = text
            }
        }
        self.headers = headers
        let text = try reader.optionalString("body") ?? ""
        guard let bytes = Base64.decode(text) else {
            throw JSONDecodeError(path: reader.path("body"), message: "expected Base64")
        }
        body = bytes
    }
}

/// Telling a JSON-RPC response from the rest by its first bytes, as both sides of the provider
/// ABI write them (docs/provider-abi.md: a host request writes `method` before `id`).
package enum JSONRPCResponsePrefix {
    /// Whether `bytes` begin `{"jsonrpc":"2.0","id":DIGITS,"result":` or `…,"error":`: a
    /// response, whatever follows (a request carries a `method` there instead).
    package static func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let prefix: StaticString = #"{"jsonrpc":"2.0","id":"#
        let length = prefix.utf8CodeUnitCount
        guard bytes.count > length, spells(bytes, at: 0, prefix) else { return false }
        var position = length
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        guard position > length else { return false }
        return spells(bytes, at: position, #","result":"#) || spells(bytes, at: position, #","error":"#)
    }

    /// Whether `bytes` hold `text` at `offset` (compared in place: the generic `elementsEqual` and
    /// `starts(with:)` cost ~1,000 instructions on each provider reply).
    private static func spells(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard let base = bytes.baseAddress, offset >= 0, count <= bytes.count - offset else { return false }
        return memcmp(base + offset, text.utf8Start, count) == 0
    }
}
