// Manifest discovery benchmark (DESIGN §9: 1,000 manifests ≤ 100 ms).
//
// Writes N manifests shaped like manifests/note.yaml (plus settings and a localized title) into a
// temporary folder, then times `ManifestCatalog.discover` R times and prints the median.
//
//     swift build -c release --product discovery-bench && .build/release/discovery-bench [N] [R]
import ContextHost
import Foundation

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let runs = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 15 : 15

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

var times: [Double] = []
var accepted = 0
for _ in 0..<runs {
    let start = DispatchTime.now().uptimeNanoseconds
    let catalog = ManifestCatalog.discover(directories: [folder.path])
    times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    accepted = catalog.manifests.count
}
times.sort()
print(String(format: "discovery: %d manifests (%d accepted), median %.1f ms, min %.1f ms, max %.1f ms over %d runs",
             count, accepted, times[times.count / 2], times[0], times[times.count - 1], runs))
