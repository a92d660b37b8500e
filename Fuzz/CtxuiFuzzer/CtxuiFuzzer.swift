// libFuzzer target: ctxui value decoding in the SDK (Sources/ContextProviderKit/Model). The input is parsed as
// JSON and decoded as each value type in turn (chip, detail, detail block, form, field, option,
// item, encoded item, submit outcome, availability, metadata, accessory, coordinate, marker, fact,
// series, threshold): what decodes must encode to JSON that decodes to an equal value. It is also
// read as request params the fast way (`RequestParams.readItem`), which must agree with the
// general decoder. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`ctxui-fuzzer FILE|DIR…`).
import ContextProviderKit

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    SDKFuzzEntry.ctxui(data)
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
@_cdecl("ctxui_fuzzer_main")
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
        print("ctxui-fuzzer: replayed \(count) inputs without a crash")
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
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }
}
#endif
