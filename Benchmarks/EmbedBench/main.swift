// The embedding API's cost (issue 26): `ping` and `items/preview` of the ~1 KB note
// (Benchmarks/requests/preview-note.jsonl) through `InProcessHost` (the host in this process, over
// the in-memory connection) and through `ContextHostClient` (a spawned `context-host`), closed
// loop (one in flight) and with W in flight, with the Note provider in-process. W in flight is W
// callers in a loop each (`preview_rps`, as rpcload keeps W outstanding) and, beside it, a task per
// request (`preview_spawned_rps`).
//
//     swift build -c release --product embed-bench && swift build -c release --product context-host &&
//       swift build -c release --product NoteProvider   (one --product per command: SwiftPM keeps the last)
//     .build/release/embed-bench [--n 20000] [--window 64] [--reps 3] [--rows in-process,client]
//
// Prints one `key=value` line per measure (medians over the reps), for compare.sh, whose stdio rows
// in the same run are the baseline: the same requests through rpcload and the pipes.
import ContextHost
import ContextHostClient
import ContextProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var n = 20000
    var window = 64
    var reps = 3
    /// Which rows to run (`--rows in-process` alone, e.g. under `perf record`).
    var rows: Set<String> = ["in-process", "client"]
    /// Which measures to take (`--only preview_p50_us`, e.g. under callgrind); nil: all.
    var only: Set<String>?
}

var options = Options()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--n": options.n = Int(arguments.next() ?? "") ?? options.n
    case "--window": options.window = Int(arguments.next() ?? "") ?? options.window
    case "--reps": options.reps = Int(arguments.next() ?? "") ?? options.reps
    case "--rows": options.rows = Set((arguments.next() ?? "").split(separator: ",").map(String.init))
    case "--only": options.only = Set((arguments.next() ?? "").split(separator: ",").map(String.init))
    default:
        FileHandle.standardError.write("usage: embed-bench [--n N] [--window W] [--reps R] [--rows in-process,client] [--only MEASURE,…]\n".data(using: .utf8)!)
        exit(2)
    }
}

let products = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let manifests = root + "/manifests"

/// The note item from the benchmark's request template.
func noteItem() throws -> ContextItem {
    let line = try String(contentsOfFile: root + "/Benchmarks/requests/preview-note.jsonl", encoding: .utf8)
        .split(separator: "\n").first.map(String.init) ?? ""
    let request = try JSONValue(parsing: Array(line.utf8))
    return try ContextItem(json: request["params"]?["item"] ?? .null)
}

/// Medians and percentiles of microsecond samples.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// Closed loop: p50 latency in µs.
func closedLoop(_ n: Int, _ body: () async throws -> Void) async throws -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(n)
    let clock = ContinuousClock()
    for _ in 0..<n {
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        samples.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
    }
    samples.sort()
    return percentile(samples, 0.5)
}

/// `window` callers, each sending its next request as soon as its last is answered, until `n`
/// are answered: requests per second. (As `rpcload` keeps `window` requests in flight: the host is
/// measured, not the creation of a task per request, which `spawned` measures.)
func pipelined(_ n: Int, window: Int, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let callers = max(1, min(window, n))
    try await withThrowingTaskGroup(of: Void.self) { group in
        for caller in 0..<callers {
            // The first `n % callers` callers send one more.
            let count = n / callers + (caller < n % callers ? 1 : 0)
            group.addTask { for _ in 0..<count { try await body() } }
        }
        try await group.waitForAll()
    }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Double(n) / seconds
}

/// `window` requests in flight, each in a task of its own, until `n` are answered: requests per
/// second (what an app that spawns a task per request sees; the parent task starts each one).
func spawned(_ n: Int, window: Int, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        var sent = 0
        for _ in 0..<min(window, n) {
            group.addTask { try await body() }
            sent += 1
        }
        while try await group.next() != nil {
            if sent < n {
                group.addTask { try await body() }
                sent += 1
            }
        }
    }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Double(n) / seconds
}

func measure(_ label: String, session: some ContextHostSession, item: ContextItem, only: Set<String>?) async throws -> [String: Double] {
    _ = try await session.send(InitializeBenchRequest())
    let preview = ItemsPreviewRequest(item: item)
    // Warm up.
    for _ in 0..<1000 { _ = try await session.send(preview) }
    let measures: KeyValuePairs<String, () async throws -> Double> = [
        "ping_p50_us": { try await closedLoop(options.n) { _ = try await session.send(PingRequest()) } },
        "preview_p50_us": { try await closedLoop(options.n) { _ = try await session.send(preview) } },
        "ping_rps": { try await pipelined(options.n * 5, window: options.window) { _ = try await session.send(PingRequest()) } },
        "preview_rps": { try await pipelined(options.n * 5, window: options.window) { _ = try await session.send(preview) } },
        "preview_spawned_rps": { try await spawned(options.n * 5, window: options.window) { _ = try await session.send(preview) } },
    ]
    var results: [String: Double] = [:]
    for (key, run) in measures where only?.contains(key) ?? true {
        results[key] = try await run()
    }
    return results
}

/// `initialize` with defaults; the answer is read as `EmptyObject` (not decoded).
struct InitializeBenchRequest: RequestType, EmptyParams {
    typealias Response = EmptyObject
    static let method = "initialize"
    static let summary = "initialize"
    var json: JSONValue { ["clientInfo": ["name": "embed-bench"], "locale": "en-US"] }
}

let item = try noteItem()
var runs: [String: [String: [Double]]] = [:]
for _ in 0..<options.reps {
    // In-process host.
    if options.rows.contains("in-process") {
        var configuration = HostConfiguration(manifestDirectories: [manifests], libraryDirectories: [products])
        configuration.isolation.policy = .inProcess
        let inProcess = try InProcessHost(configuration: configuration)
        for (key, value) in try await measure("in-process", session: inProcess, item: item, only: options.only) {
            runs["in-process", default: [:]][key, default: []].append(value)
        }
        await inProcess.close()
    }
    // Client of a spawned host.
    if options.rows.contains("client") {
        let client = try ContextHostClient(
            executable: products + "/context-host",
            arguments: ["serve", "--manifests", manifests, "--isolation", "in-process", "--no-state", "--no-installed", "--no-watch"])
        for (key, value) in try await measure("client", session: client, item: item, only: options.only) {
            runs["client", default: [:]][key, default: []].append(value)
        }
        await client.close()
    }
}
for (row, measures) in runs.sorted(by: { $0.key < $1.key }) {
    let line = measures.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\(String(format: "%.1f", median($0.value)))" }.joined(separator: " ")
    print("embed row=\(row) n=\(options.n) window=\(options.window) reps=\(options.reps) \(line)")
}
