// libFuzzer target for the Calendar provider: iCalendar bytes → unfolding and content lines →
// components → events, time zones and rules → expansion over a 30-day and a ten-year window
// (CalendarCheck.fuzz checks order, bounds and the occurrence cap). See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`calendar-fuzzer FILE|DIR…`).
import CalendarProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    CalendarCheck.fuzz(Array(data))
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// SwiftPM links executables with `main` aliased to `<module>_main`; start libFuzzer from there.
@_cdecl("calendar_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("calendar-fuzzer: replayed \(count) inputs without a crash")
    }
}
#endif
