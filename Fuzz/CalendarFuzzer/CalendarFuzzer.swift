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

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
