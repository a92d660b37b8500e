// What every fuzz target shares: libFuzzer's driver entry (fuzz builds, `-DFUZZING`) and the
// replay of saved inputs (normal builds). A target keeps only its `fuzzOne` and two small shims
// that must live in its own module: `LLVMFuzzerTestOneInput` and SwiftPM's `<module>_main`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if FUZZING
    /// libFuzzer's driver (libclang_rt.fuzzer).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// Starts libFuzzer with the command line and the target's one-input callback.
    public enum FuzzDriver {
        public static func run(
            _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
            _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
        ) -> CInt {
            var count = argc
            var arguments = argv
            return LLVMFuzzerRunDriver(&count, &arguments, callback)
        }
    }
#endif

/// Runs every file named (directories: every file in them, not hidden) through `body` once, in
/// name order; answers how many ran.
public enum FuzzReplay {
    public static func run(_ paths: ArraySlice<String>, _ body: (UnsafeRawBufferPointer) -> Void) -> Int {
        var count = 0
        for path in paths {
            var files: [String] = []
            if let directory = opendir(path) {
                while let entry = readdir(directory) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                    }
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
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
