// libFuzzer target for the provider binary inspector (ELF and Mach-O headers, PT_DYNAMIC,
// .gnu.version_r, .dynsym, the DWARF Swift version) and the compatibility checks on a fake host.
// See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`elf-fuzzer FILE|DIR…`).
import ContextHost
import FuzzSupport

/// A host that matches nothing on disk, so `problems` runs every check without touching real paths.
let fakeHost = HostRuntime(platform: .linuxX86_64, swiftVersion: "6.3.1", glibcVersion: "2.17", swiftRuntimeDirectory: "/nonexistent/ctxhost-fuzz", swiftToolchain: "0123456")

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    do {
        let binary = try ProviderBinary.inspect(bytes: bytes, name: "fuzz.so")
        // An accepted library must describe itself and be checked without trapping.
        _ = binary.runtime.kind
        for problem in binary.problems(on: fakeHost, libraryPath: "/nonexistent/ctxhost-fuzz/fuzz.so") {
            if problem.message.isEmpty || problem.fix.isEmpty { fatalError("a problem without message or fix") }
        }
        _ = binary.runtimeProblem(declared: .swiftStatic, name: "fuzz.so")
    } catch {
        // Every rejection is binaryInvalid and names the file.
        if error.code != .binaryInvalid || !error.message.contains("fuzz.so") { fatalError("unexpected rejection: \(error)") }
    }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
