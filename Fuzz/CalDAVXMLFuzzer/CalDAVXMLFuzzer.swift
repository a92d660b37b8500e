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

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
