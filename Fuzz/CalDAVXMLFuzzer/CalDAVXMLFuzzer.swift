// libFuzzer target for the Calendar provider's CalDAV answer reader: bytes → the bounded XML
// reader (no DOCTYPE, no entities but XML's five, depth/element caps) → multistatus → hrefs
// resolved on one origin → calendar data through the iCalendar reader (CalDAVCheck.fuzz).
// See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`caldav-xml-fuzzer FILE|DIR…`).
import CalendarProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    CalDAVCheck.fuzz(Array(data))
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// SwiftPM links executables with `main` aliased to `<module>_main`; start libFuzzer from there.
@_cdecl("caldav_xml_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("caldav-xml-fuzzer: replayed \(count) inputs without a crash")
    }
}
#endif
