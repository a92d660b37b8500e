// libFuzzer target for the Health Metric provider's Apple Health export.xml scanner (input fed in chunks; the first byte picks
// the chunk size and partial reads), compared with one whole read, then the item and its views. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`health-export-fuzzer FILE|DIR…`).
import HealthMetricProvider

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    if let violation = HealthFuzz.export(data) { fatalError("health-export-fuzzer: \(violation)") }
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
@_cdecl("health_export_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("health-export-fuzzer: replayed \(count) inputs without a crash")
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

    /// The whole file, or `nil` when it cannot be read.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}
#endif
