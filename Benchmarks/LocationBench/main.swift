// Location provider benchmark: gazetteer load, search and reverse lookup, measured two ways:
// - in process: the provider's own data structures (Provider-*.swift are symlinks to
//   Providers/Location/, compiled into this executable with the same release flags);
// - through the real libLocationProvider.so (C ABI round trip, as the host calls it in-process).
//
//   Benchmarks/LocationBench/prepare.sh        # makes .build/location-bench/cities1000.txt (144,561 places)
//   swift build -c release --product location-bench --product LocationProvider
//   .build/release/location-bench [N]
//
// Goals: loading the default gazetteer ≤ 50 ms; over ≥ 100,000 places, search p99 ≤ 1 ms and
// reverse lookup p99 ≤ 100 µs. Every number includes the C ABI round trip (JSON encode, call,
// JSON decode, continuation), so the provider-side cost is lower still.
import ContextHostTestSupport
import ContextProviderKit
import Foundation

let root = BuildProducts.packageRoot
let data = root + "/data/location"
let bigFile = root + "/.build/location-bench/cities1000.txt"
let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000

func defaultSettings(gazetteer: String = data + "/cities15000.tsv") -> JSONObject {
    [
        "gazetteer": .string(gazetteer), "countryInfo": .string(data + "/countryInfo.txt"),
        "admin1Codes": .string(data + "/admin1CodesASCII.txt"),
    ]
}

func openProvider(_ settings: JSONObject) throws -> ProviderHarness {
    try ProviderHarness(product: "LocationProvider", providerID: "com.contexthost.location", settings: settings)
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func since(_ start: UInt64) -> Double { Double(now() - start) / 1000 }

struct Stats {
    var samples: [Double]
    var row: String {
        let stats = BenchSamples(samples)
        return String(format: "%d | %.1f | %.1f | %.1f", samples.count, stats.percentile(0.5), stats.percentile(0.99), stats.maximum)
    }
}

/// A deterministic generator (SplitMix64).
typealias Random = SplitMix64

func query(_ provider: ProviderHarness, _ text: String) async throws -> Int {
    let result = try await provider.call(
        "collect/query", ["sessionId": "bench", "stepId": "location", "fieldId": "place", "query": .string(text)])
    return result["options"]?.arrayValue?.count ?? 0
}

func reverse(_ provider: ProviderHarness, _ latitude: Double, _ longitude: Double) async throws {
    let text = String(format: "%.5f, %.5f", latitude, longitude)
    let result = try await provider.call(
        "collect/submit", ["sessionId": "bench", "stepId": "location", "values": ["coordinates": .string(text)]])
    guard result["outcome"] == "item", result["item"]?["content"]?["placeName"] != nil else {
        fatalError("reverse lookup of \(text) failed: \(result)")
    }
}

/// Names from a gazetteer file (column 2), for realistic queries.
func names(in path: String) throws -> [String] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n").compactMap { line in
        guard !line.hasPrefix("#") else { return nil }
        let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
        return columns.count > 2 ? String(columns[1]) : nil
    }
}

func queries(from names: [String], count: Int, random: inout Random) -> [String] {
    var result: [String] = []
    while result.count < count {
        let name = names[Int(random.next() % UInt64(names.count))]
        let characters = Array(name)
        guard characters.count >= 2 else { continue }
        // Prefixes of 2…8 characters and the whole name, as a user types.
        let length = min(characters.count, 2 + Int(random.next() % 7))
        result.append(String(characters.prefix(length)))
    }
    return result
}

enum LocationBench {
    static func run() async throws {
        guard FileManager.default.fileExists(atPath: bigFile) else {
            print("Missing \(bigFile): run Benchmarks/LocationBench/prepare.sh first.")
            exit(1)
        }
        var random = Random(state: 42)
        print("# Location provider benchmark (\(ProcessInfo.processInfo.activeProcessorCount) cores, \(iterations) calls per row)")
        print("")
        print("All times in µs.")
        print("")

        // Overhead of one call through the harness.
        let baseline = try openProvider(defaultSettings())
        var overhead: [Double] = []
        for _ in 0..<iterations { let start = now(); _ = try await baseline.call("provider/info"); overhead.append(since(start)) }

        // 1. Loading: a fresh provider instance per run; the first query loads the gazetteer.
        var loads: [Double] = []
        for _ in 0..<15 {
            let provider = try openProvider(defaultSettings())
            let start = now(); _ = try await query(provider, "zur"); loads.append(since(start))
        }
        var bigLoads: [Double] = []
        for _ in 0..<3 {
            let provider = try openProvider(defaultSettings(gazetteer: bigFile))
            let start = now(); _ = try await query(provider, "zur"); bigLoads.append(since(start))
        }

        // In process.
        print("## In process (provider code, no ABI round trip)")
        print("")
        print("| measurement | n | p50 | p99 | max |")
        print("|---|---:|---:|---:|---:|")
        var inLoads: [Double] = []
        var small: Gazetteer?
        for _ in 0..<15 {
            let start = now()
            small = try Gazetteer(path: data + "/cities15000.tsv", countryInfoPath: data + "/countryInfo.txt", admin1Path: data + "/admin1CodesASCII.txt")
            inLoads.append(since(start))
        }
        var inBigLoads: [Double] = []
        var big: Gazetteer?
        for _ in 0..<3 {
            let start = now()
            big = try Gazetteer(path: bigFile, countryInfoPath: data + "/countryInfo.txt", admin1Path: data + "/admin1CodesASCII.txt")
            inBigLoads.append(since(start))
        }
        print("| load default gazetteer (\(small!.count) places; parse + search index + k-d tree + name tables) | \(Stats(samples: inLoads).row) |")
        print("| load GeoNames file (\(big!.count) places) | \(Stats(samples: inBigLoads).row) |")
        for (label, gazetteer, path) in [("default, \(small!.count) places", small!, data + "/cities15000.tsv"), ("\(big!.count) places", big!, bigFile)] {
            let list = queries(from: try names(in: path), count: iterations, random: &random)
            var searches: [Double] = []
            for text in list {
                let start = now()
                let found = gazetteer.search.search(text, offset: 0, limit: 10, populations: gazetteer.populations, names: gazetteer.names)
                searches.append(since(start))
                precondition(found.total > 0, "no match for \(text)")
            }
            var oneLetter: [Double] = []
            for letter in "abcdefghijklmnopqrstuvwxyz" {
                for _ in 0..<20 {
                    let start = now()
                    _ = gazetteer.search.search(String(letter), offset: 0, limit: 10, populations: gazetteer.populations, names: gazetteer.names)
                    oneLetter.append(since(start))
                }
            }
            var reverses: [Double] = []
            for _ in 0..<iterations {
                let latitude = asin(2 * random.unit() - 1) * 180 / .pi
                let longitude = random.unit() * 360 - 180
                let start = now()
                _ = gazetteer.nearest(to: latitude, longitude)
                reverses.append(since(start))
            }
            var nearPlaces: [Double] = []
            for _ in 0..<iterations {
                // Realistic input: within about 50 km of a random place.
                let place = Int(random.next() % UInt64(gazetteer.count))
                let latitude = max(-90, min(90, gazetteer.latitudes[place] + (random.unit() - 0.5)))
                var longitude = gazetteer.longitudes[place] + (random.unit() - 0.5)
                if longitude > 180 { longitude -= 360 } else if longitude < -180 { longitude += 360 }
                let start = now()
                _ = gazetteer.nearest(to: latitude, longitude)
                nearPlaces.append(since(start))
            }
            if ProcessInfo.processInfo.environment["LOCATION_BENCH_TAIL"] != nil {
                // Are the slow lookups slow every time (the data) or once (the scheduler)?
                var again: [(Double, Double, Double, Double)] = []
                var tailRandom = Random(state: 7)
                for _ in 0..<iterations {
                    let latitude = asin(2 * tailRandom.unit() - 1) * 180 / .pi
                    let longitude = tailRandom.unit() * 360 - 180
                    var times: [Double] = []
                    for _ in 0..<2 {
                        let start = now()
                        _ = gazetteer.nearest(to: latitude, longitude)
                        times.append(since(start))
                    }
                    again.append((latitude, longitude, times[0], times[1]))
                }
                for row in again.sorted(by: { $0.2 > $1.2 }).prefix(15) { print("tail:", row) }
            }
            print("| search, 2–8 letter prefixes, page of 10 (\(label)) | \(Stats(samples: searches).row) |")
            print("| search, one letter (\(label)) | \(Stats(samples: oneLetter).row) |")
            print("| reverse lookup, uniform random points (\(label)) | \(Stats(samples: reverses).row) |")
            print("| reverse lookup, points within ~50 km of a place (\(label)) | \(Stats(samples: nearPlaces).row) |")
        }
        print("")
        print("## Through libLocationProvider.so (C ABI round trip included)")
        print("")
        print("| measurement | n | p50 | p99 | max |")
        print("|---|---:|---:|---:|---:|")
        print("| call overhead (`provider/info`) | \(Stats(samples: overhead).row) |")
        print("| load default gazetteer (33,961 places, first query) | \(Stats(samples: loads).row) |")
        print("| load 144,561-place GeoNames file (first query) | \(Stats(samples: bigLoads).row) |")

        for (label, path) in [("default, 33,961 places", data + "/cities15000.tsv"), ("144,561 places", bigFile)] {
            let provider = try openProvider(defaultSettings(gazetteer: path))
            _ = try await query(provider, "a")
            let list = queries(from: try names(in: path), count: iterations, random: &random)
            var searches: [Double] = []
            var oneLetter: [Double] = []
            for text in list { let start = now(); _ = try await query(provider, text); searches.append(since(start)) }
            for letter in "abcdefghijklmnopqrstuvwxyz" {
                for _ in 0..<20 { let start = now(); _ = try await query(provider, String(letter)); oneLetter.append(since(start)) }
            }
            var reverses: [Double] = []
            for _ in 0..<iterations {
                // Uniform on the sphere.
                let latitude = asin(2 * random.unit() - 1) * 180 / .pi
                let longitude = random.unit() * 360 - 180
                let start = now(); try await reverse(provider, latitude, longitude); reverses.append(since(start))
            }
            print("| search, 2–8 letter prefixes (\(label)) | \(Stats(samples: searches).row) |")
            print("| search, one letter (\(label)) | \(Stats(samples: oneLetter).row) |")
            print("| reverse lookup via `collect/submit` (\(label)) | \(Stats(samples: reverses).row) |")
        }
    }
}

try await LocationBench.run()
