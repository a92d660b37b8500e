#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit

/// A provider that tries to reach the network, for the egress tests (id from its manifest's
/// `providerId`, so one library serves several manifests: `Tests/IntegrationTests/EgressTests.swift`
/// writes them).
///
/// `item/describe` does what the item's content says and answers JSON text:
/// - `{"url": "https://…", "method"?: "GET", "headers"?: [[name, value]]}`: `context.fetch`
///   through the host; answers `{"status", "headers", "body"}` or `{"error": code, "reason",
///   "field", "message"}`.
/// - with `"repeat": N` (1 to 1000) as well: N fetches timed in the provider (egress-bench),
///   `"concurrency": C` (1 to 16, default 1) of them in flight at once.
/// - `{"socket": "127.0.0.1", "port": N}`: opens a TCP socket itself and connects (the raw way);
///   answers `{"socket": "ok"}` or `{"errno": N, "call": "socket" | "connect"}`.
///
/// `provider/makeContext` (`collect/make`) makes an item `{"url": <the chipURL setting>}`, and the
/// chip of an item with a `url` is made by fetching it during `item/preview` (after a `$/log`
/// line): title `fetched STATUS` and the body's size, or `fetch failed` and the error, so a test
/// sees whether a listing's host requests reached the host (`composer/list`).
public struct FetchFixture: ContextProvider {
    public static let metadata = ProviderMetadata(id: "com.contexthost.fetch-fixture", title: "Fetch fixture", version: "0.0.1", iconName: "network")

    let context: ProviderContext

    public init(context: ProviderContext) throws {
        self.context = context
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let content = item.content
        if let address = content["socket"]?.stringValue {
            return Self.rawSocket(address, port: content["port"]?.intValue ?? 443).jsonString
        }
        guard let url = content["url"]?.stringValue else { throw ProviderError.invalidParams("no url") }
        var headers: [(String, String)] = []
        for pair in content["headers"]?.arrayValue ?? [] {
            if let list = pair.arrayValue, list.count == 2, let name = list[0].stringValue, let value = list[1].stringValue {
                headers.append((name, value))
            }
        }
        let request = ProviderHTTPRequest(method: content["method"]?.stringValue ?? "GET", url: url, headers: headers)
        if let count = content["repeat"]?.intValue, (1...1000).contains(count) {
            let concurrency = content["concurrency"]?.intValue ?? 1
            guard (1...16).contains(concurrency) else { throw ProviderError.invalidParams("concurrency: 1 to 16") }
            return try await Self.timed(count, concurrency: concurrency, request, context: context).jsonString
        }
        do {
            let response = try await context.fetch(request)
            var names = JSONObject()
            for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { names[name] = .string(value) }
            return JSONValue.object(["status": .number(Double(response.status)), "headers": .object(names), "body": .string(response.text)]).jsonString
        } catch let error as ProviderError {
            return JSONValue.object([
                "error": .number(Double(error.code)), "message": .string(error.message),
                "reason": error.data?["reason"] ?? .null, "field": error.data?["field"] ?? .null,
            ]).jsonString
        }
    }

    /// For egress-bench: `count` fetches, `concurrency` at a time (each lane one after the other),
    /// each timed here in the provider (from the call to `context.fetch` to its answer); answers
    /// `{"microseconds": [...], "totalMicroseconds", "bytes"}` (bytes of a last body), or the first
    /// non-200 status as `{"error": status}`.
    static func timed(_ count: Int, concurrency: Int, _ request: ProviderHTTPRequest, context: ProviderContext) async throws -> JSONValue {
        let clock = ContinuousClock()
        let started = clock.now
        let lanes = max(1, min(concurrency, count))
        let outcomes = try await withThrowingTaskGroup(of: (times: [Double], bytes: Int, failed: Int?).self) { group in
            for lane in 0..<lanes {
                let share = count / lanes + (lane < count % lanes ? 1 : 0)
                group.addTask {
                    var times: [Double] = []
                    times.reserveCapacity(share)
                    var bytes = 0
                    for _ in 0..<share {
                        let start = clock.now
                        let response = try await context.fetch(request)
                        times.append(Self.microseconds(clock.now - start))
                        bytes = response.body.count
                        guard response.status == 200 else { return (times, bytes, response.status) }
                    }
                    return (times, bytes, nil)
                }
            }
            var outcomes: [(times: [Double], bytes: Int, failed: Int?)] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let total = clock.now - started
        if let failed = outcomes.lazy.compactMap(\.failed).first { return ["error": .number(Double(failed))] }
        return [
            "microseconds": .array(outcomes.flatMap(\.times).map(JSONValue.number)), "totalMicroseconds": .number(Self.microseconds(total)),
            "bytes": .number(Double(outcomes.last?.bytes ?? 0)),
        ]
    }

    /// An item whose chip is fetched (`chipURL` from the settings), for `collect/make`.
    public func makeContext() async throws -> ContextItem? {
        guard let url = context.settings.string("chipURL") else { return nil }
        return context.makeItem(type: "fetch", displayName: "Fetched chip", content: ["url": .string(url)])
    }

    /// A chip made from a fetch during the preview (`url` in the content), after a `$/log` line.
    public func preview(_ item: ContextItem) async throws -> ContextChip {
        guard let url = item.content["url"]?.stringValue else { return .default(for: item, icon: Self.metadata.iconName) }
        context.log(.info, "chip of \(item.displayName): fetching")
        do {
            let response = try await context.fetch(url)
            return ContextChip(icon: Self.metadata.iconName, title: "fetched \(response.status)", subtitle: "\(response.body.count) bytes")
        } catch let error as ProviderError {
            return ContextChip(icon: Self.metadata.iconName, title: "fetch failed", subtitle: "\(error.code): \(error.message.prefix(100))")
        }
    }

    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    }

    static func rawSocket(_ address: String, port: Int) -> JSONValue {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return ["errno": .number(Double(errno)), "call": "socket"] }
        defer { close(fd) }
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        inet_pton(AF_INET, address, &target.sin_addr)
        let status = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { return ["errno": .number(Double(errno)), "call": "connect"] }
        return ["socket": "ok"]
    }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: FetchFixture.self)
}
