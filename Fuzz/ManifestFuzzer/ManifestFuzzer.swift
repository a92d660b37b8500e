// libFuzzer target for the manifest loader (libyaml → YAMLNode → Manifest validation) and the
// host configuration file parser, which shares the YAML reader. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`manifest-fuzzer FILE|DIR…`).
import ContextHost
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    do {
        let manifest = try Manifest.parse(bytes: bytes, file: "fuzz.yaml", directory: "/nonexistent/ctxhost-fuzz")
        // An accepted manifest must describe itself without trapping.
        _ = manifest.title.description
    } catch {
        // Every rejection carries at least one positioned diagnostic.
        if error.diagnostics.isEmpty { fatalError("a rejected manifest without diagnostics") }
        for diagnostic in error.diagnostics { _ = diagnostic.description }
    }
    _ = try? HostConfigFile.parse(bytes: bytes, file: "fuzz-config.yaml", directory: "/nonexistent/ctxhost-fuzz")
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
