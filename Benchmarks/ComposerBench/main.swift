// Composer scale benchmark (issue 9: 100,000 items across 1,000 composers held in memory ≤ 200 MB,
// `composer/list` p99 ≤ 1 ms).
//
// Starts the real release `context-host serve` (Note provider, in-process) and talks to it over
// its stdin/stdout pipes with a minimal client (blocking reads, no polling). It opens C composers,
// attaches I notes to each through `collect/start` + `collect/submit` with `composerId` (pipelined,
// 50 sessions at a time; bodies 100–1,000 bytes of Markdown-ish text), then reports the host's
// VmRSS and VmHWM and the round-trip latency of `composer/list {composerId}` (closed loop, random
// composers) and of `composer/list` without params (every composer's summary).
//
//     swift build -c release --product composer-bench --product context-host --product NoteProvider
//     .build/release/composer-bench [--composers 1000] [--items 100] [--lists 5000] [--summaries 2000] [--settle 31] [--state-dir DIR]
//
// Without --state-dir the host runs with --no-state (drafts in memory only); with it, every attach
// saves its draft there (use a tmpfs folder such as /dev/shm/x to leave the disk out of it), and at
// the end a second host is started on the same drafts and measured again (restored from disk).
// Memory is read right after the burst of attaches and again after --settle seconds idle (each
// collection's timers hold memory until they expire).
// The Note manifest is copied with `maximumAttachmentCount: 100` (the bundled one allows 5) and the
// host gets `--max-composers` (default 64).
import ContextProviderKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var composers = 1000
    var items = 100
    var lists = 5000
    /// `composer/list` calls without params (every composer's summary) after the warm-up.
    var summaries = 2000
    var stateDirectory: String?
    /// Seconds to wait after attaching before measuring again (the collection timers of a burst of
    /// attaches are released when they expire, after the 30 s collect timeout).
    var settle = 31

    static let usage = "usage: composer-bench [--composers N (1000)] [--items N (100)] [--lists N (5000)] [--summaries N (2000)] [--settle SECONDS (31)] [--state-dir DIR]"

    init(_ arguments: [String]) {
        var index = 1
        /// Stops with the usage line and why (a bench run with a mistyped option would measure
        /// something else).
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("composer-bench: \(message)\n\(Self.usage)\n".utf8))
            exit(2)
        }
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        func count() -> Int {
            let text = value()
            guard let number = Int(text), number >= 0 else { fail("\(arguments[index - 1]) needs a whole number ≥ 0, not \"\(text)\"") }
            return number
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--composers": composers = count()
            case "--items": items = count()
            case "--lists": lists = count()
            case "--summaries": summaries = count()
            case "--state-dir": stateDirectory = value()
            case "--settle": settle = count()
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: fail("unknown argument \(arguments[index])")
            }
            index += 1
        }
    }
}

/// A JSON-RPC connection over the host's pipes: newline-delimited, blocking reads.
final class Connection {
    let process = Process()
    private let input: Int32
    private let output: Int32
    /// Bytes read from the host: `start..<end` not yet returned, of which `start..<scanned` has
    /// no newline.
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0
    private var end = 0
    private var scanned = 0
    private var nextID = 0

    init(executable: String, arguments: [String]) throws {
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        try process.run()
        input = stdinPipe.fileHandleForWriting.fileDescriptor
        output = stdoutPipe.fileHandleForReading.fileDescriptor
    }

    /// Sends a request; returns its id.
    @discardableResult
    func send(_ method: String, _ params: JSONValue) -> Int {
        nextID += 1
        let message: JSONValue = ["jsonrpc": "2.0", "id": .number(Double(nextID)), "method": .string(method), "params": params]
        write(message.jsonBytes + [0x0A])
        return nextID
    }

    func notify(_ method: String, _ params: JSONValue) {
        let message: JSONValue = ["jsonrpc": "2.0", "method": .string(method), "params": params]
        write(message.jsonBytes + [0x0A])
    }

    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(input, raw.baseAddress! + offset, raw.count - offset)
                if count < 0, errno == EINTR { continue }
                precondition(count > 0, "writing to the host failed: \(String(cString: strerror(errno)))")
                offset += count
            }
        }
    }

    /// The next line from the host (raw bytes, sharing the read buffer: drop it before the next
    /// read, or that read copies the buffer). Each byte is searched
    /// for the newline once, with `memchr`, and read into one buffer that is reused: a listing's
    /// answer is ~175 KB, and a client that zeroes a fresh chunk per read and searches the whole
    /// line again after each read adds its own time to every round trip it measures.
    func readLine() -> ArraySlice<UInt8> {
        while true {
            let newline = buffer.withUnsafeBytes { raw -> Int? in
                guard scanned < end, let found = memchr(raw.baseAddress! + scanned, 0x0A, end - scanned) else { return nil }
                return raw.baseAddress!.distance(to: UnsafeRawPointer(found))
            }
            if let newline {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = start
                return line
            }
            scanned = end
            if start == end {
                (start, end, scanned) = (0, 0, 0)
            } else if start > 0, buffer.count - end < Self.readSize {
                buffer.withUnsafeMutableBytes { raw in _ = memmove(raw.baseAddress!, raw.baseAddress! + start, end - start) }
                (end, scanned, start) = (end - start, end - start, 0)
            }
            if buffer.count - end < Self.readSize { buffer.append(contentsOf: repeatElement(0, count: max(buffer.count, Self.readSize))) }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress! + end, $0.count - end) }
            if count < 0, errno == EINTR { continue }
            precondition(count > 0, "the host closed its output")
            end += count
        }
    }

    /// The least room a read gets.
    private static let readSize = 1 << 16

    /// The next response, parsed; fails on an error response.
    func result() -> JSONValue {
        let line = readLine()
        guard let message = try? line.withUnsafeBytes({ try JSONValue(parsing: $0) }) else {
            fatalError("the host wrote something that is not JSON: \(String(decoding: line, as: UTF8.self))")
        }
        if message["id"] == nil { return result() }  // a notification
        if let error = message["error"] { fatalError("the host answered an error: \(error)") }
        return message["result"] ?? .null
    }

    func call(_ method: String, _ params: JSONValue) -> JSONValue {
        send(method, params)
        return result()
    }

    func close() {
        Glibc.close(input)
        process.waitUntilExit()
    }
}

/// SplitMix64: reproducible text.
typealias Random = SplitMix64

let words = [
    "milk", "eggs", "bread", "coffee", "meeting", "project", "deadline", "review", "notes", "idea", "draft", "plan",
    "budget", "travel", "Berlin", "Tokyo", "call", "**important**", "_maybe_", "`code`", "list", "check", "follow-up",
    "question", "answer", "summary", "chapter", "garden", "recipe", "Café", "naïve", "über", "résumé", "✓",
]

func noteBody(_ random: inout Random) -> String {
    let length = 100 + random.below(901)  // 100…1,000 bytes
    var text = "# " + words[random.below(words.count)] + "\n\n"
    while text.utf8.count < length {
        if random.below(12) == 0 { text += "\n- " } else if !text.hasSuffix(" ") && !text.hasSuffix("\n") { text += " " }
        text += words[random.below(words.count)]
    }
    return text
}

/// The CPU time process `pid` has used, user and system, in milliseconds (/proc/PID/stat: in
/// clock ticks, so measure spans of seconds), and in all from its CPU-time clock (nanoseconds).
func cpuMilliseconds(_ pid: Int32) -> (user: Double, system: Double, total: Double) {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields = text.lastIndex(of: ")").map { text[text.index(after: $0)...].split(separator: " ") } ?? []
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
        fatalError("cannot read the CPU time of process \(pid) from /proc/\(pid)/stat")
    }
    var clock = clockid_t()
    var time = timespec()
    guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 else {
        fatalError("cannot read the CPU-time clock of process \(pid): \(String(cString: strerror(errno)))")
    }
    let tick = 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    return (user * tick, system * tick, Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1e6)
}

func status(_ pid: Int32) -> (rss: Double, hwm: Double) {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func field(_ name: String) -> Double {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        return Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }
    return (field("VmRSS"), field("VmHWM"))
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func percentiles(_ name: String, _ samples: [Double]) -> String {
    let sorted = samples.sorted()
    func at(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    return String(
        format: "%@: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms (%d calls)", name, at(0.5), at(0.9), at(0.99),
        sorted.last ?? 0, sorted.count)
}

let options = Options(CommandLine.arguments)
let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let manifests = FileManager.default.temporaryDirectory.appendingPathComponent("composer-bench-\(getpid())")
try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: manifests) }
let note = try String(contentsOfFile: root + "/manifests/note.yaml", encoding: .utf8)
    .replacingOccurrences(of: "maximumAttachmentCount: 5", with: "maximumAttachmentCount: \(max(options.items, 1))")
try note.write(to: manifests.appendingPathComponent("note.yaml"), atomically: true, encoding: .utf8)

var arguments = [
    "serve", "--manifests", manifests.path, "--library-path", binaries, "--no-watch", "--registry-cache", "none",
    "--max-composers", String(options.composers),
]
arguments += options.stateDirectory.map { ["--state-dir", $0] } ?? ["--no-state"]
let host = try Connection(executable: binaries + "/context-host", arguments: arguments)
let pid = host.process.processIdentifier
_ = host.call("initialize", ["clientInfo": ["name": "composer-bench"], "locale": "en-US"])
host.notify("initialized", [:])
let baseline = status(pid)
print("context-host \(arguments.joined(separator: " "))")
print(String(format: "after initialize: VmRSS %.1f MB", baseline.rss))

// Open the composers.
var composerIDs: [String] = []
for _ in 0..<options.composers {
    host.send("composer/open", ["maximumItems": .number(Double(options.items)), "byteBudget": .number(Double(64 << 20))])
}
for _ in 0..<options.composers { composerIDs.append(host.result()["composerId"]?.stringValue ?? "") }

// Attach the notes, 50 collections at a time (the host allows 64 open sessions).
var random = Random(state: 20_261_121)
var bodyBytes = 0
let attachStart = now()
let batch = 50
for composerID in composerIDs {
    var remaining = options.items
    while remaining > 0 {
        let count = min(batch, remaining)
        for _ in 0..<count {
            host.send("collect/start", ["providerId": "com.contexthost.note", "composerId": .string(composerID)])
        }
        var sessions: [String] = []
        for _ in 0..<count { sessions.append(host.result()["sessionId"]?.stringValue ?? "") }
        for session in sessions {
            let body = noteBody(&random)
            bodyBytes += body.utf8.count
            host.send(
                "collect/submit",
                ["sessionId": .string(session), "values": ["title": .string("Note \(random.below(100_000))"), "body": .string(body)]])
        }
        for _ in 0..<count {
            let outcome = host.result()
            precondition(outcome["outcome"] == "item", "submit did not attach: \(outcome)")
        }
        remaining -= count
    }
}
let attachSeconds = Double(now() - attachStart) / 1e9
let items = options.composers * options.items
let loaded = status(pid)
print(String(
    format: "attached %d notes (bodies %.1f MB, mean %d bytes) to %d composers in %.1f s (%.0f items/s)", items,
    Double(bodyBytes) / 1e6, items > 0 ? bodyBytes / items : 0, options.composers, attachSeconds,
    Double(items) / attachSeconds))
print(String(format: "holding every item: VmRSS %.1f MB, VmHWM %.1f MB", loaded.rss, loaded.hwm))

if options.settle > 0 {
    sleep(UInt32(options.settle))
    let settled = status(pid)
    print(String(format: "after %d s idle: VmRSS %.1f MB", options.settle, settled.rss))
}

/// `composer/list {composerId}` (closed loop over random composers) and `composer/list`.
func measureLists(_ host: Connection, _ composerIDs: [String], random: inout Random) throws {
    let check = host.call("composer/list", ["composerId": .string(composerIDs[0])])
    precondition(check["items"]?.arrayValue?.count == options.items, "composer/list did not list every item")
    precondition(check["items"]?.arrayValue?.first?["providerAvailable"] == true, "the Note provider did not make the chips")
    let chips = closedLoop(host, name: "composer/list {composerId} (\(options.items) items with chips)", count: options.lists, warmUp: 200) {
        ["composerId": .string(composerIDs[random.below(composerIDs.count)])]
    }
    if options.lists > 0 { print(chips) }

    let line = host.call("composer/list", [:])
    precondition(line["composers"]?.arrayValue?.count == options.composers, "composer/list missed composers")
    let summaries = closedLoop(host, name: "composer/list (summaries of \(options.composers) composers)", count: options.summaries, warmUp: 20) { [:] }
    if options.summaries > 0 { print(summaries) }
}

/// `count` calls of `composer/list` one at a time, after `warmUp` unmeasured ones: the latencies'
/// percentiles, the host's CPU time per call, in all and call by call, and the machine probe.
///
/// A call's CPU is read from the host's CPU-time clock at each send, so it covers everything the
/// host did from one send to the next (work left after the answer is written counts too). The
/// same listing costs the same instructions every time, so its spread is the machine's speed and
/// the scheduling (how the host's threads share the vCPUs) from call to call.
///
/// After each answer (outside the timed span) the client runs `MachineProbe`, a fixed piece of
/// memory work, and times it: when the slowest calls come with slow probes, the machine was slow
/// at those moments, whatever the host was doing.
func closedLoop(_ host: Connection, name: String, count: Int, warmUp: Int, params: () -> JSONValue) -> String {
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    var cpuMarks: [UInt64] = []
    cpuMarks.reserveCapacity(count + 1)
    var probes: [Double] = []
    probes.reserveCapacity(count)
    let cpuClock = CPUClock(host.process.processIdentifier)
    var probe = MachineProbe()
    var before = (user: 0.0, system: 0.0, total: 0.0)
    for index in 0..<(warmUp + count) {
        if index == warmUp { before = cpuMilliseconds(host.process.processIdentifier) }
        let params = params()
        if index >= warmUp { cpuMarks.append(cpuClock.nanoseconds()) }
        let start = now()
        host.send("composer/list", params)
        let answered = String(decoding: host.readLine().prefix(64), as: UTF8.self).contains(#""result":"#)
        if index >= warmUp { latencies.append(Double(now() - start) / 1e6) }
        precondition(answered, "composer/list was not answered with a result")
        let probed = probe.run()
        if index >= warmUp { probes.append(probed) }
    }
    guard count > 0 else { return "" }
    cpuMarks.append(cpuClock.nanoseconds())
    let after = cpuMilliseconds(host.process.processIdentifier)
    let calls = Double(count)
    let cpus = zip(cpuMarks.dropFirst(), cpuMarks).map { Double($0 - $1) / 1e6 }
    let sortedCPUs = cpus.sorted()
    func cpu(_ p: Double) -> Double { sortedCPUs[min(sortedCPUs.count - 1, Int(Double(sortedCPUs.count) * p))] }
    // The calls at or above the latency p99, and what the host's CPU and the probe did in them.
    let p99 = latencies.sorted()[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
    let slowest = latencies.indices.filter { latencies[$0] >= p99 }
    func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
    return percentiles(name, latencies) + "\n"
        + String(
            format: "  host CPU per call: %.3f ms (user %.3f + system %.3f, all threads); call by call p50 %.3f, p90 %.3f, p99 %.3f ms",
            (after.total - before.total) / calls, (after.user - before.user) / calls, (after.system - before.system) / calls,
            cpu(0.5), cpu(0.9), cpu(0.99)) + "\n"
        + String(
            format: "  slowest 1%% of calls (%d, from %.3f ms): host CPU median %.3f ms; machine probe median %.1f µs, against %.1f µs over all calls",
            slowest.count, p99, median(slowest.map { cpus[$0] }), median(slowest.map { probes[$0] }) * 1000, median(probes) * 1000)
}

/// A fixed piece of memory work timed between calls: copy 512 KiB, then read a byte of every
/// 64-byte line of the copy (more than a core's L2 cache on this machine's CPUs, so it feels
/// memory as the host's listing does). The same work every time: its time is the machine's speed
/// at that moment.
struct MachineProbe {
    private var source = [UInt8](repeating: 1, count: 512 << 10)
    private var target = [UInt8](repeating: 0, count: 512 << 10)
    private var sum = 0

    /// Runs the probe once; its time in milliseconds.
    mutating func run() -> Double {
        let start = now()
        target.withUnsafeMutableBytes { target in
            source.withUnsafeBytes { source in _ = memcpy(target.baseAddress!, source.baseAddress!, target.count) }
        }
        var sum = self.sum
        for line in stride(from: 0, to: target.count, by: 64) { sum = sum &* 31 &+ Int(target[line]) }
        self.sum = sum  // (kept, so the reads are not optimised away)
        return Double(now() - start) / 1e6
    }
}

/// The CPU-time clock of a process (user + system of all its threads, in nanoseconds).
struct CPUClock {
    private var clock = clockid_t()

    init(_ pid: Int32) {
        guard clock_getcpuclockid(pid, &clock) == 0 else {
            fatalError("cannot find the CPU-time clock of process \(pid): \(String(cString: strerror(errno)))")
        }
    }

    func nanoseconds() -> UInt64 {
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { fatalError("cannot read a CPU-time clock: \(String(cString: strerror(errno)))") }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

try measureLists(host, composerIDs, random: &random)
let end = status(pid)
print(String(format: "at the end: VmRSS %.1f MB, VmHWM %.1f MB", end.rss, end.hwm))
host.close()

// The same drafts, restored from disk by a new host.
if options.stateDirectory != nil {
    let start = now()
    let restarted = try Connection(executable: binaries + "/context-host", arguments: arguments)
    _ = restarted.call("initialize", ["clientInfo": ["name": "composer-bench"], "locale": "en-US"])
    restarted.notify("initialized", [:])
    let restoreMilliseconds = Double(now() - start) / 1e6
    let restored = status(restarted.process.processIdentifier)
    print(String(
        format: "restarted on the saved drafts: initialize answered after %.0f ms; VmRSS %.1f MB, VmHWM %.1f MB",
        restoreMilliseconds, restored.rss, restored.hwm))
    try measureLists(restarted, composerIDs, random: &random)
    let after = status(restarted.process.processIdentifier)
    print(String(format: "at the end: VmRSS %.1f MB, VmHWM %.1f MB", after.rss, after.hwm))
    restarted.close()
}
