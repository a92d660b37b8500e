// health-bench: generates realistic Apple Health exports and measures the Health Metric
// provider's ingest through its real library (ProviderHarness, the C ABI, as the host loads it).
//
//   health-bench make-sample [--out data/health]            the committed sample (fixed seed)
//   health-bench make-export --size 1G [--out FILE] [--seed N] [--hourly]
//                                                            (default: Watch-wearer density, samples every 5–10 min)
//   health-bench ingest FILE [--cache DIR] [--skip-reopen]   cold ingest, then cached reopens
//   health-bench reopen FILE --cache DIR                     cached reopens only (after ingest --cache DIR)
//   health-bench [--size 1G]                                 make-export into .build/health if missing, then ingest
//
// Build in release mode: swift build -c release && .build/release/health-bench
import ContextHostTestSupport
import ContextProviderKit
import Foundation

do {
    try await HealthBench.main()
} catch {
    FileHandle.standardError.write(Data("health-bench: \(error)\n".utf8))
    exit(1)
}

enum HealthBench {
    static func main() async throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let mode = arguments.first.map { $0.hasPrefix("--") ? "all" : $0 } ?? "all"
        if mode != "all" { arguments.removeFirst() }
        func option(_ name: String) -> String? {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
            return arguments[index + 1]
        }
        let seed = UInt64(option("--seed") ?? "20240101") ?? 20_240_101
        switch mode {
        case "make-sample":
            try makeSample(directory: option("--out") ?? "data/health", seed: seed)
        case "make-export":
            let size = try parseSize(option("--size") ?? "1G")
            let out = option("--out") ?? ".build/health/export-\(option("--size") ?? "1G").xml"
            try makeExport(size: size, path: out, seed: seed, dense: !arguments.contains("--hourly"))
        case "ingest":
            guard let path = arguments.first(where: { !$0.hasPrefix("--") }) else {
                throw BenchError("usage: health-bench ingest FILE")
            }
            try await ingest(path: path, cache: option("--cache"), reopen: !arguments.contains("--skip-reopen"))
        case "reopen":
            guard let path = arguments.first(where: { !$0.hasPrefix("--") }), let cache = option("--cache") else {
                throw BenchError("usage: health-bench reopen FILE --cache DIR")
            }
            try await reopen(settings: ["export": .string(path), "cacheDirectory": .string(cache)])
        case "all":
            let sizeText = option("--size") ?? "1G"
            let path = ".build/health/export-\(sizeText).xml"
            if !FileManager.default.fileExists(atPath: path) {
                try makeExport(size: try parseSize(sizeText), path: path, seed: seed, dense: true)
            }
            try await ingest(path: path, cache: nil, reopen: true)
        default:
            throw BenchError("unknown mode \(mode); use make-sample, make-export, ingest or no mode")
        }
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// `1G`, `200M`, `64K` or bytes.
    static func parseSize(_ text: String) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.uppercased().last, let unit = units[last], let number = Double(text.dropLast()) {
            return Int(number * Double(unit))
        }
        guard let bytes = Int(text) else { throw BenchError("size \(text) is not like 1G, 200M or 4096") }
        return bytes
    }

    // MARK: Generation

    /// Buffered writing to a file.
    final class Output {
        let handle: FileHandle
        var buffer: [UInt8] = []
        init(path: String) throws {
            let url = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 0)
        }
        func write(_ text: String) {
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 20 { flush() }
        }
        func flush() {
            handle.write(Data(buffer))
            buffer.removeAll(keepingCapacity: true)
        }
        func close() throws {
            flush()
            try handle.close()
        }
    }

    static func makeSample(directory: String, seed: UInt64) throws {
        let generator = ExportGenerator(seed: seed)
        let export = try Output(path: directory + "/export.xml")
        let (days, bytes) = generator.writeExport(days: 28, write: export.write)
        try export.close()
        let csv = try Output(path: directory + "/metrics.csv")
        generator.writeCSV(days: 28, write: csv.write)
        try csv.close()
        print("wrote \(directory)/export.xml (\(days) days, \(bytes) bytes) and \(directory)/metrics.csv")
    }

    static func makeExport(size: Int, path: String, seed: UInt64, dense: Bool) throws {
        let started = Date()
        let generator = ExportGenerator(seed: seed, dense: dense)
        let output = try Output(path: path)
        let (days, bytes) = generator.writeExport(days: nil, targetBytes: size, write: output.write)
        try output.close()
        print(String(format: "wrote %@: %d days, %.1f MB in %.1f s", path, days, Double(bytes) / 1e6, Date().timeIntervalSince(started)))
    }

    // MARK: Measurement

    /// Peak resident set size of this process so far, in MB (getrusage; kilobytes on Linux).
    static func peakRSS() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #if os(Linux)
        return Double(usage.ru_maxrss) / 1024
        #else
        return Double(usage.ru_maxrss) / 1_048_576
        #endif
    }

    /// Current resident set size in MB (Linux: /proc/self/statm).
    static func currentRSS() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    static func ingest(path: String, cache given: String?, reopen reopens: Bool) async throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let size = Double((attributes[.size] as? NSNumber)?.int64Value ?? 0)
        let cache = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("health-bench-\(UUID().uuidString)").path
        try? FileManager.default.removeItem(atPath: cache)
        defer { if given == nil { try? FileManager.default.removeItem(atPath: cache) } }
        let settings: JSONObject = ["export": .string(path), "cacheDirectory": .string(cache)]

        let baseline = currentRSS()
        let cold = try ProviderHarness(product: "HealthMetricProvider", providerID: "com.contexthost.health-metric", settings: settings)
        let afterOpen = currentRSS()
        let start = DispatchTime.now()
        let form = try await cold.call("collect/start", ["sessionId": "bench"], timeout: 600)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let peak = peakRSS()
        let metrics = (form["fields"]?.arrayValue?.first?["options"]?.arrayValue ?? []).count
        print(String(format: "file: %@ (%.1f MB)", path, size / 1e6))
        print(String(format: "cold ingest (collect/start through the .so): %.2f s, %.1f MB/s, %d metrics", seconds, size / 1e6 / seconds, metrics))
        print(String(format: "memory: RSS before open %.1f MB, after open %.1f MB, peak %.1f MB (ingest added at most %.1f MB)", baseline, afterOpen, peak, peak - afterOpen))

        if reopens { try await reopen(settings: settings) }
    }

    /// New instances over the same file: each reads the cache. (The harness never closes an
    /// instance, so each run keeps its aggregates in memory.)
    static func reopen(settings: JSONObject) async throws {
        var reopenTimes: [Double] = []
        for run in 0..<5 {
            let reopenStart = DispatchTime.now()
            let warm = try ProviderHarness(product: "HealthMetricProvider", providerID: "com.contexthost.health-metric", settings: settings)
            _ = try await warm.call("provider/availability")
            _ = try await warm.call("collect/start", ["sessionId": .string("bench-\(run)")])
            reopenTimes.append(Double(DispatchTime.now().uptimeNanoseconds - reopenStart.uptimeNanoseconds) / 1e6)
        }
        reopenTimes.sort()
        print(String(format: "cached reopen (open + availability + collect/start): median %.2f ms, max %.2f ms over %d runs", reopenTimes[reopenTimes.count / 2], reopenTimes.last!, reopenTimes.count))
    }
}
