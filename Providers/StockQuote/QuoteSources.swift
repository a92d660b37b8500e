#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit

/// A web quote service, reached through the host's broker (`context.fetch`; the manifest's
/// `network.origins` lists both services' settings). docs/providers/stock-quote.md.
enum RemoteSource: Sendable, Hashable {
    /// Stooq's keyless daily-history CSV download: `BASE/q/d/l/?s=acme.us&i=d`.
    case stooq(base: String)
    /// Alpha Vantage's `TIME_SERIES_DAILY` JSON: `BASE/query?function=TIME_SERIES_DAILY&symbol=ACME`;
    /// the key (`apikey`) is a secret the host injects.
    case alphaVantage(base: String)

    var name: String {
        switch self {
        case .stooq: "stooq"
        case .alphaVantage: "alphavantage"
        }
    }

    /// The request URL for `symbol` (never with a key: the host adds it).
    func url(for symbol: String) -> String {
        switch self {
        case .stooq(let base):
            let lower = symbol.lowercased()
            return Self.trimmed(base) + "/q/d/l/?s=" + Self.encode(lower.contains(".") ? lower : lower + ".us") + "&i=d"
        case .alphaVantage(let base):
            return Self.trimmed(base) + "/query?function=TIME_SERIES_DAILY&outputsize=compact&datatype=json&symbol=" + Self.encode(symbol)
        }
    }

    static func trimmed(_ base: String) -> String {
        var text = base
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    static func encode(_ text: String) -> String {
        var output = ""
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            let character = Character(Unicode.Scalar(byte))
            if character.isASCII, character.isLetter || character.isNumber || "-._~".contains(character) {
                output.append(character)
            } else {
                output += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 15)])"
            }
        }
        return output
    }

    /// What an answer means.
    enum Outcome {
        /// Daily rows as CSV bytes (Date,Open,High,Low,Close,Volume), to parse.
        case csv([UInt8])
        /// Try again later (rate limit, server trouble); seconds the server asked for, if any.
        case retry(String, after: Double?)
        /// No data for this symbol, or the key is wrong: retrying does not help.
        case failed(String)
    }

    /// Reads a response.
    func interpret(_ response: ProviderHTTPResponse) -> Outcome {
        let retryAfter = response.headers["retry-after"].flatMap { Double($0.trimmingSpaces) }.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        if response.status == 429 { return .retry("HTTP 429 (rate limited)", after: retryAfter) }
        if response.status >= 500 { return .retry("HTTP \(response.status)", after: retryAfter) }
        guard response.status == 200 else { return .failed("HTTP \(response.status)") }
        switch self {
        case .stooq:
            let text = String(decoding: response.body.prefix(64), as: UTF8.self)
            if text.hasPrefix("No data") { return .failed("the service has no data for this symbol") }
            return .csv(response.body)
        case .alphaVantage:
            return Self.alphaVantageCSV(response.body)
        }
    }

    /// Alpha Vantage's `{"Time Series (Daily)": {"2026-11-26": {"1. open": "…", …}}}` as CSV rows;
    /// its error, note and information objects as failures (the rate-limit note as a retry).
    static func alphaVantageCSV(_ body: [UInt8]) -> Outcome {
        guard body.count <= Limits.maximumPriceFile, let json = try? JSONValue(parsing: body), let object = json.objectValue else {
            return .failed("the answer is not JSON")
        }
        if let message = object["Error Message"]?.stringValue { return .failed("the service said: \(Limits.quote(message, limit: 200))") }
        if let note = (object["Note"] ?? object["Information"])?.stringValue {
            return .retry("the service said: \(Limits.quote(note, limit: 200))", after: nil)
        }
        guard let series = object["Time Series (Daily)"]?.objectValue else { return .failed("the answer has no \"Time Series (Daily)\"") }
        var csv = "Date,Open,High,Low,Close,Volume\n"
        var rows: [(String, String)] = []
        for (date, values) in series {
            func field(_ name: String) -> String {
                guard let text = values[name]?.stringValue, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }) else { return "" }
                return text
            }
            guard date.utf8.count == 10 else { continue }
            rows.append((date, "\(date),\(field("1. open")),\(field("2. high")),\(field("3. low")),\(field("4. close")),\(field("5. volume"))\n"))
        }
        for (_, line) in rows.sorted(by: { $0.0 < $1.0 }) { csv += line }
        return .csv(Array(csv.utf8))
    }
}

/// The last good answer of each source and symbol, in the provider's data folder, so quotes
/// work offline (marked stale) when a fetch fails.
struct QuoteDiskCache: Sendable {
    let folder: String?

    func file(_ source: RemoteSource, _ symbol: String) -> String? {
        guard let folder, Ticker.isValid(symbol) else { return nil }
        return "\(folder)/\(source.name)-\(symbol).csv"
    }

    /// The cached CSV and when it was fetched (seconds since 1970).
    func read(_ source: RemoteSource, _ symbol: String) -> (bytes: [UInt8], fetchedAt: Double)? {
        guard let path = file(source, symbol), let stamp = FileStamp(path: path), stamp.isRegularFile,
            let bytes = FileSystem.read(path, limit: Limits.maximumPriceFile)
        else { return nil }
        return (bytes, Double(stamp.seconds))
    }

    func store(_ source: RemoteSource, _ symbol: String, _ bytes: [UInt8]) {
        guard let folder, let path = file(source, symbol) else { return }
        mkdir(folder, 0o700)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = bytes.withUnsafeBytes { buffer in write(fd, buffer.baseAddress, buffer.count) == buffer.count }
        close(fd)
        if written { rename(temporary, path) } else { unlink(temporary) }
    }
}

/// Backoff for 429 and 5xx: retries within a request, then a pause for the source.
enum QuoteBackoff {
    /// Tries of one fetch (the first and two retries).
    static let attempts = 3
    /// The wait before retry `n` (1-based) without `Retry-After`: 0.25 s, 0.5 s.
    static func delay(retry: Int, retryAfter: Double?) -> Double {
        if let retryAfter { return min(retryAfter, 2) }
        return 0.25 * Double(1 << min(retry - 1, 4))
    }
    /// How long a source is left alone after its retries failed.
    static func pause(retryAfter: Double?) -> Double { min(max(retryAfter ?? 30, 5), 300) }
}
