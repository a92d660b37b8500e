// Manifest discovery benchmark (Benchmarks/README.md, issue 9: 1,000 manifests ≤ 100 ms cold, ≤ 10 ms with
// the registry cache).
//
// Writes N manifests shaped like manifests/note.yaml (plus settings and a localized title) into a
// temporary folder, then times R runs of each and prints the medians:
//   cold    `ManifestCatalog.discover`: list, stat, read and parse every file;
//   cached  `ManifestCatalog.discover(_:cacheFile:)` with an up-to-date cache: read the cache, list
//           and stat every file, parse nothing, write nothing (what `context-host` does on a start
//           after the first);
// and, once, the first cached run (parse everything and write the cache).
//
//     swift build -c release --product discovery-bench && .build/release/discovery-bench [N] [R] [both|cold|cached]
import ContextHost
import Foundation

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let runs = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 15 : 15
/// `cold`, `cached` or `both` (default); one alone is handy under `perf record`.
let mode = CommandLine.arguments.count > 3 ? CommandLine.arguments[3] : "both"

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("discovery-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
for index in 0..<count {
    let text = """
        # yaml-language-server: $schema=../docs/manifest.schema.json
        manifestVersion: 1
        id: com.example.provider-\(index)
        title: { en: Provider \(index), de: Anbieter \(index) }
        iconName: note.text
        version: 1.2.\(index % 10)
        library: libNoteProvider.so
        priority: \(index % 100)
        maximumAttachmentCount: 3
        usesContainerPanel: true
        collection: form
        isolation: process
        availability:
          platforms: [linux, macos]
          host: ">=0.1.0 <1.0.0"
          permissions: [network]
        settings:
          dataDirectory: { type: path, default: "~/.local/share/provider-\(index)" }
          limit: { type: integer, default: 10 }
        timeouts: { collect: 30s, preview: 500ms, detail: 2s, encode: 1s }

        """
    try text.write(to: folder.appendingPathComponent(String(format: "m%05d.yaml", index)), atomically: false, encoding: .utf8)
}

// Files changed in the last second are not cached (ManifestCatalog.defaultRacyWindowNanoseconds).
usleep(1_100_000)

func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }
func summary(_ name: String, _ times: [Double]) -> String {
    let sorted = times.sorted()
    return String(format: "%@: median %.2f ms, min %.2f ms, max %.2f ms over %d runs", name,
                  sorted[sorted.count / 2], sorted[0], sorted[sorted.count - 1], sorted.count)
}

let searchPaths = [ManifestSearchPath(path: folder.path, displayPath: folder.path, source: .commandLine)]
var cold: [Double] = []
var accepted = 0
for _ in 0..<(mode == "cached" ? 1 : runs) {
    let start = DispatchTime.now().uptimeNanoseconds
    let catalog = ManifestCatalog.discover(searchPaths)
    cold.append(milliseconds(since: start))
    accepted = catalog.manifests.count
}

let cacheFile = folder.path + "/cache/" + ManifestCache.fileName(folders: [folder.path])
var start = DispatchTime.now().uptimeNanoseconds
let (first, firstReport) = ManifestCatalog.discover(searchPaths, cacheFile: cacheFile)
let firstTime = milliseconds(since: start)
precondition(firstReport.written && firstReport.parsed == count, "the first cached run should parse and save everything: \(firstReport)")
var cached: [Double] = []
for _ in 0..<(mode == "cold" ? 1 : runs) {
    start = DispatchTime.now().uptimeNanoseconds
    let (catalog, report) = ManifestCatalog.discover(searchPaths, cacheFile: cacheFile)
    cached.append(milliseconds(since: start))
    precondition(report.reused == count && report.parsed == 0 && !report.written, "expected every manifest from the cache: \(report)")
    precondition(catalog == first, "the cached catalog differs from the parsed one")
}
let cacheBytes = (try? FileManager.default.attributesOfItem(atPath: cacheFile)[.size] as? Int) ?? 0
print("discovery of \(count) manifests (\(accepted) accepted):")
print("  " + summary("cold (parse every file)", cold))
print("  " + summary("cached (stat every file, parse none)", cached))
print(String(format: "  first cached run (parse every file, write the cache): %.2f ms; cache file %d bytes", firstTime, cacheBytes))
