import Foundation

/// Copies of manifests with a longer `preview` timeout, for tests that measure behaviour, not
/// speed: a debug build on a loaded machine can take longer than the 500 ms default for a burst or
/// an availability check, and that must not decide a functional test (speed is the benchmarks' job).
public enum RelaxedManifests {
    /// The bundled manifests (`manifests/*.yaml` in the package).
    public static var bundled: [String] {
        let folder = BuildProducts.packageRoot + "/manifests"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { folder + "/" + $0 }
    }

    /// Writes copies of `sources` into a new temporary folder and returns its path. In each copy
    /// `preview: 500ms` becomes `preview: <previewTimeout>` and a `../data/` setting default becomes
    /// the package's absolute `data/` folder (the bundled manifests name their data relative to
    /// their own folder).
    public static func folder(copying sources: [String], previewTimeout: String = "10s") throws -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("ctxhost-relaxed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for source in sources {
            let text = try String(contentsOfFile: source, encoding: .utf8)
                .replacingOccurrences(of: "preview: 500ms", with: "preview: \(previewTimeout)")
                .replacingOccurrences(of: "../data/", with: BuildProducts.packageRoot + "/data/")
            try text.write(toFile: folder + "/" + (source as NSString).lastPathComponent, atomically: true, encoding: .utf8)
        }
        return folder
    }
}
