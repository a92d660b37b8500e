// libFuzzer target: the Location provider's coordinate parser (decimal, hemisphere letters, DMS, geo: URIs)
// and its reading of item content. The whole input is parsed as a coordinate: a parsed point must be
// finite and within ±90/±180, and its geo: URI must parse again to a point within 1e-6°. When the
// input is JSON, it is also read as a location item's content (a forged item) and every label the
// views make from it is made. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`coordinate-fuzzer FILE|DIR…`).
import ContextProviderKit
import LocationProvider

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let text = String(decoding: data, as: UTF8.self)
    if let point = LocationFuzzEntry.coordinate(text) {
        guard point.latitude.isFinite, point.longitude.isFinite, (-90...90).contains(point.latitude),
            (-180...180).contains(point.longitude)
        else { fatalError("parsed \(text.debugDescription) to \(point.latitude), \(point.longitude)") }
        guard let again = LocationFuzzEntry.coordinate(point.geoURI) else { fatalError("\(point.geoURI) does not parse again") }
        let sameLongitude = abs(again.longitude - point.longitude) <= 1e-6 || abs(point.latitude) == 90
        guard abs(again.latitude - point.latitude) <= 1e-6, sameLongitude else {
            fatalError("\(point.geoURI) parses to \(again.latitude), \(again.longitude), not \(point.latitude), \(point.longitude)")
        }
        _ = LocationFuzzEntry.coordinate(point.dms)
    }
    if let content = try? JSONValue(parsing: data) {
        _ = LocationFuzzEntry.itemContent(content)
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
@_cdecl("coordinate_fuzzer_main")
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
        print("coordinate-fuzzer: replayed \(count) inputs without a crash")
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
