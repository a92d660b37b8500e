// What every fuzz target shares: its entry (`FuzzMain.start`), which starts libFuzzer's driver
// (fuzz builds, `-DFUZZING`) or replays saved inputs (normal builds). A target keeps only its
// `fuzzOne` and a three-line `@main` that hands it to `FuzzMain.start` (SwiftPM names the `@main`
// entry `<module>_main` and links the executable's `main` to it, in fuzz builds too).
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

    /// The running target's one-input check, for libFuzzer's C callback (which cannot capture it).
    nonisolated(unsafe) private var fuzzTarget: (UnsafeRawBufferPointer) -> Void = { _ in }

    /// libFuzzer's one-input entry (its runtime's `main` object refers to it), for the running target.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        fuzzTarget(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
#endif

/// A fuzz target's entry: `@main enum Main { static func main() { FuzzMain.start(fuzzOne) } }`.
public enum FuzzMain {
    /// Fuzz builds: runs libFuzzer's driver with the command line and `fuzzOne`, and exits with its
    /// status. Normal builds: replays every input named on the command line once (`FuzzReplay`),
    /// then says how many ran under the program's name.
    public static func start(_ fuzzOne: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        #if FUZZING
            fuzzTarget = fuzzOne
            var count = CommandLine.argc
            var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&count, &arguments) { data, size in LLVMFuzzerTestOneInput(data, size) })
        #else
            let count = FuzzReplay.run(CommandLine.arguments.dropFirst(), fuzzOne)
            let name = CommandLine.arguments.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "fuzzer"
            print("\(name): replayed \(count) inputs without a crash")
            exit(0)
        #endif
    }
}

/// The input being replayed, for the timeout handler (a fixed C buffer: a signal handler may
/// not allocate).
nonisolated(unsafe) private var currentInput = UnsafeMutablePointer<CChar>.allocate(capacity: 4096)

/// Where `/proc/self/status` is read after each input, allocated before the data segment is
/// capped.
private let statusBufferSize = 8192
nonisolated(unsafe) private var statusBuffer = UnsafeMutableRawPointer.allocate(byteCount: statusBufferSize, alignment: 8)

/// Runs every file named (directories: every file in them, not hidden) through `body` once, in
/// name order; answers how many ran.
///
/// As libFuzzer does, `-timeout=SECONDS` (default 10) fails an input that takes longer (exit 70,
/// naming it) and `-rss_limit_mb=MB` (default 2048) fails one after which the process's peak
/// resident memory (`VmHWM`; see `peakResidentMB`) is over the limit (exit 71, naming it); 0 turns either off. The
/// data segment is capped at twice the RSS limit, so a runaway allocation fails fast instead of
/// taking the machine's memory. Other arguments starting with `-` are ignored (libFuzzer's).
public enum FuzzReplay {
    public static func run(_ arguments: ArraySlice<String>, _ body: (UnsafeRawBufferPointer) -> Void) -> Int {
        var timeout: UInt32 = 10
        var rssLimitMB = 2048
        var paths: [String] = []
        for argument in arguments {
            if argument.hasPrefix("-timeout="), let value = UInt32(argument.dropFirst("-timeout=".count)) {
                timeout = value
            } else if argument.hasPrefix("-rss_limit_mb="), let value = Int(argument.dropFirst("-rss_limit_mb=".count)), value >= 0 {
                rssLimitMB = value
            } else if !argument.hasPrefix("-") {
                paths.append(argument)
            }
        }
        if rssLimitMB > 0 {
            _ = peakResidentMB()  // allocates what it reads into now, before the cap
            let bytes = rlim_t(rssLimitMB) * 2 * (1 << 20)
            var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
            #if canImport(Glibc)
                _ = setrlimit(Int32(RLIMIT_DATA.rawValue), &limit)
            #else
                _ = setrlimit(RLIMIT_DATA, &limit)
            #endif
        }
        signal(SIGALRM) { _ in
            // Only async-signal-safe calls: write(2) of fixed text and the saved name, then _exit.
            for fd: Int32 in [1, 2] {
                _ = "replay: timeout: an input ran longer than -timeout: ".withCString { write(fd, $0, strlen($0)) }
                _ = write(fd, currentInput, strlen(currentInput))
                _ = "\n".withCString { write(fd, $0, 1) }
            }
            _exit(70)
        }
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
                _ = file.withCString { strncpy(currentInput, $0, 4095) }
                currentInput[4095] = 0
                alarm(timeout)
                bytes.withUnsafeBytes { body($0) }
                alarm(0)
                if rssLimitMB > 0 {
                    let peakMB = peakResidentMB()
                    if peakMB > rssLimitMB {
                        print("replay: rss limit: the peak resident memory reached \(peakMB) MB (limit \(rssLimitMB) MB) after \(file)")
                        exit(71)
                    }
                }
                count += 1
            }
        }
        return count
    }

    /// This process's peak resident memory in MB. On Linux `VmHWM` of `/proc/self/status`: the
    /// peak of this program's own memory. (`ru_maxrss` is not: after `exec` it starts from the
    /// parent's peak at `fork`, so a replay started by a large test process seemed over the limit.)
    static func peakResidentMB() -> Int {
        #if os(Linux)
            // No allocation here: under the data-segment cap a small limit leaves no room for one.
            let fd = open("/proc/self/status", O_RDONLY)
            if fd >= 0 {
                let count = read(fd, statusBuffer, statusBufferSize)
                close(fd)
                if count > 0, let kilobytes = field("VmHWM:", in: UnsafeRawBufferPointer(start: statusBuffer, count: count)) {
                    return kilobytes / 1024
                }
            }
        #endif
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        #if os(Linux)
            return Int(usage.ru_maxrss) / 1024
        #else
            return Int(usage.ru_maxrss) / (1 << 20)  // bytes on Darwin
        #endif
    }

    /// The number after `name` at the start of a line of `text` (`/proc` status format), or nil.
    static func field(_ name: StaticString, in text: UnsafeRawBufferPointer) -> Int? {
        let key = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart + key.count <= text.count {
            if memcmp(text.baseAddress! + lineStart, key.baseAddress!, key.count) == 0 {
                var index = lineStart + key.count
                var value = 0
                var digits = 0
                while index < text.count, text[index] != 0x0A {
                    let digit = Int(text[index]) - 48
                    if (0...9).contains(digit), digits < 15 {
                        value = value * 10 + digit
                        digits += 1
                    }
                    index += 1
                }
                return digits > 0 ? value : nil
            }
            while lineStart < text.count, text[lineStart] != 0x0A { lineStart += 1 }
            lineStart += 1
        }
        return nil
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
