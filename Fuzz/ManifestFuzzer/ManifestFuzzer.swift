// libFuzzer target for the manifest loader (libyaml → YAMLNode → Manifest validation) and the
// host configuration file parser, which shares the YAML reader. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`manifest-fuzzer FILE|DIR…`).
import ContextHost

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

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// libFuzzer's driver (libclang_rt.fuzzer).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links executables with `main` aliased to `<module>_main`; start libFuzzer from there.
@_cdecl("manifest_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum ManifestReplay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("manifest-fuzzer: replayed \(count) inputs without a crash")
    }
}
#endif

#if !FUZZING
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs every file named (directories: every file in them) through `body` once.
enum FuzzReplay {
    static func run(_ paths: ArraySlice<String>, _ body: (UnsafeRawBufferPointer) -> Void) -> Int {
        var count = 0
        for path in paths {
            var files: [String] = []
            if let directory = opendir(path) {
                while let entry = readdir(directory) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                    if !name.hasPrefix(".") { files.append(path + "/" + name) }
                }
                closedir(directory)
            } else {
                files.append(path)
            }
            for file in files.sorted() {
                guard let bytes = readFile(file) else { continue }
                bytes.withUnsafeBytes { body($0) }
                count += 1
            }
        }
        return count
    }

    static func readFile(_ path: String) -> [UInt8]? {
        try? FileBytes.read(path)
    }
}
#endif
