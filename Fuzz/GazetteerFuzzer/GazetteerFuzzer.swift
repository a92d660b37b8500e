// libFuzzer target: the Location provider's file readers. The first byte picks the reader (modulo 6): the
// gazetteer (GeoNames 19-column or compact 9-column TSV, then search and nearest-place lookups on
// what loaded), the same with a minimum population, countryInfo.txt, admin1CodesASCII.txt, a TZif
// zone file, or a POSIX TZ rule; the rest of the input is the file. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`gazetteer-fuzzer FILE|DIR…`).
import LocationProvider

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    guard let selector = data.first else { return }
    let rest = Array(data.dropFirst())
    switch selector % 6 {
    case 0: _ = LocationFuzzEntry.gazetteer(rest)
    case 1: _ = LocationFuzzEntry.gazetteer(rest, minimumPopulation: 1000)
    case 2: _ = LocationFuzzEntry.nameTable(rest, admin1: false)
    case 3: _ = LocationFuzzEntry.nameTable(rest, admin1: true)
    case 4: LocationFuzzEntry.zoneFile(rest)
    default: LocationFuzzEntry.posixRule(String(decoding: rest, as: UTF8.self))
    }
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
@_cdecl("gazetteer_fuzzer_main")
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
        print("gazetteer-fuzzer: replayed \(count) inputs without a crash")
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
