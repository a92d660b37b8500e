// Calendar provider benchmark: parse and expand a generated 10,000-event iCalendar file through
// the real libCalendarProvider.so (C ABI, as the host calls it in-process). Results and machine
// state: Benchmarks/results/calendar.md.
//
//   swift build -c release --product calendar-bench --product CalendarProvider
//   .build/release/calendar-bench [RUNS] [EVENTS]
//
// Goal: parse and expand a 10,000-event calendar in ≤ 100 ms. A "cold" run opens a fresh provider
// instance (empty cache) and answers one collect/query, so it includes reading the file,
// unfolding and parsing every line, resolving time zones, expanding every recurrence over the
// 30-day window, searching, and the C ABI round trip. "Warm" queries reuse the cached parse and
// expansion (the provider re-reads a file only when its size or modification time changes).
import ContextHostTestSupport
import ContextProviderKit
import Foundation

let runs = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 20 : 20
let eventCount = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 10_000 : 10_000

/// A deterministic pseudo-random sequence (SplitMix64).
struct SplitMix {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// A Google-style export: a VTIMEZONE, then `count` events over 2024–2025 in three zones: 70 %
/// single timed events, 10 % all-day (some multi-day), 20 % recurring (daily, weekly with BYDAY,
/// monthly with ordinals, yearly; some with COUNT/UNTIL, EXDATE and an overridden instance), with
/// long folded descriptions and attendees.
func generateCalendar(count: Int) -> String {
    var random = SplitMix(state: 42)
    var out = """
        BEGIN:VCALENDAR\r
        PRODID:-//Google Inc//Google Calendar 70.9054//EN\r
        VERSION:2.0\r
        X-WR-CALNAME:Benchmark\r
        BEGIN:VTIMEZONE\r
        TZID:Europe/Berlin\r
        BEGIN:DAYLIGHT\r
        TZOFFSETFROM:+0100\r
        TZOFFSETTO:+0200\r
        DTSTART:19700329T020000\r
        RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r
        END:DAYLIGHT\r
        BEGIN:STANDARD\r
        TZOFFSETFROM:+0200\r
        TZOFFSETTO:+0100\r
        DTSTART:19701025T030000\r
        RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r
        END:STANDARD\r
        END:VTIMEZONE\r

        """
    let zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo"]
    let rules = [
        "FREQ=DAILY;COUNT=30", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU;UNTIL=20251231T230000Z",
        "FREQ=MONTHLY;BYDAY=2TH", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "FREQ=YEARLY",
        "FREQ=MONTHLY;BYMONTHDAY=1,-1;COUNT=24",
    ]
    func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    func fold(_ line: String) -> String {
        var result = ""
        var rest = Substring(line)
        var first = true
        while rest.utf8.count > (first ? 75 : 74) {
            let cut = rest.index(rest.startIndex, offsetBy: first ? 75 : 74)
            result += (first ? "" : " ") + rest[..<cut] + "\r\n"
            rest = rest[cut...]
            first = false
        }
        return result + (first ? "" : " ") + rest + "\r\n"
    }
    for index in 0..<count {
        let year = 2024 + random.next(2)
        let month = 1 + random.next(12)
        let day = 1 + random.next(28)
        let hour = 7 + random.next(11)
        let minute = [0, 15, 30, 45][random.next(4)]
        let date = "\(year)\(pad(month))\(pad(day))"
        let zone = zones[random.next(zones.count)]
        let kind = random.next(100)
        out += "BEGIN:VEVENT\r\nUID:bench-\(index)@example.com\r\nDTSTAMP:20250101T000000Z\r\n"
        out += "SUMMARY:Event \(index): \(["Planning", "Review", "Lunch", "Standup", "Workshop", "Call"][random.next(6)])\\, room \(random.next(40))\r\n"
        out += fold(
            "DESCRIPTION:Agenda for event \(index)\\nDiscuss the roadmap\\, the budget and next steps\\; bring notes. More text to make the line long enough to fold twice over.")
        out += "LOCATION:Room \(random.next(100))\\, Building \(random.next(9))\r\n"
        out += "ORGANIZER;CN=\"Organizer \(random.next(50))\":mailto:organizer@example.com\r\n"
        out += "ATTENDEE;CN=Guest;PARTSTAT=ACCEPTED;ROLE=REQ-PARTICIPANT:mailto:guest\(index)@example.com\r\n"
        if kind < 10 {
            let first = min(day, 25)
            let length = 1 + random.next(3)
            out += "DTSTART;VALUE=DATE:\(year)\(pad(month))\(pad(first))\r\n"
            out += "DTEND;VALUE=DATE:\(year)\(pad(month))\(pad(first + length))\r\n"
        } else {
            out += "DTSTART;TZID=\(zone):\(date)T\(pad(hour))\(pad(minute))00\r\n"
            out += "DTEND;TZID=\(zone):\(date)T\(pad(hour + 1))\(pad(minute))00\r\n"
            if kind >= 80 {
                out += "RRULE:\(rules[random.next(rules.count)])\r\n"
                if random.next(2) == 0 {
                    out += "EXDATE;TZID=\(zone):\(year)\(pad(month))\(pad(min(28, day + 7)))T\(pad(hour))\(pad(minute))00\r\n"
                }
            }
        }
        out += "END:VEVENT\r\n"
    }
    return out + "END:VCALENDAR\r\n"
}

func nowNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func milliseconds(since start: UInt64) -> Double { Double(nowNanoseconds() - start) / 1_000_000 }

struct Stats {
    var samples: [Double]
    func percentile(_ p: Double) -> Double { BenchSamples(samples).percentile(p) }
    func row(_ name: String) -> String {
        let mean = samples.reduce(0, +) / Double(samples.count)
        return String(
            format: "| %@ | %d | %.2f | %.2f | %.2f | %.2f |", name, samples.count, percentile(0.5), mean,
            percentile(0.99), BenchSamples(samples).maximum)
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("calendar-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let file = folder + "/bench.ics"
let text = generateCalendar(count: eventCount)
try text.write(toFile: file, atomically: true, encoding: .utf8)
let lines = text.split(separator: "\r\n").count

let settings: JSONObject = [
    "calendars": .string(file), "now": "2025-06-01T00:00:00Z", "windowDays": 30, "timeZone": "Europe/Berlin",
]
func open() throws -> ProviderHarness {
    try ProviderHarness(product: "CalendarProvider", providerID: "com.contexthost.calendar", settings: settings)
}
func query(_ harness: ProviderHarness, _ text: String) async throws -> Int {
    let result = try await harness.call(
        "collect/query", ["sessionId": "bench", "stepId": "event", "fieldId": "event", "query": .string(text)])
    return result["options"]?.arrayValue?.count ?? 0
}

print("calendar-bench: \(eventCount) events, \(lines) unfolded-or-folded lines, \(text.utf8.count / 1024) KiB, window 30 days")
// Warm up the dynamic loader and zoneinfo reads once.
_ = try await query(try open(), "warm-up")

/// CPU time of the whole process (all threads), in milliseconds: less sensitive than wall time to
/// other programs competing for the cores.
func cpuMilliseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
}

var coldContext: [Double] = []
var coldContextCPU: [Double] = []
var coldSearch: [Double] = []
for _ in 0..<runs {
    // Parse + expand: provider/makeContext on a fresh instance reads, parses and expands the whole
    // calendar over the window, then answers the next upcoming event.
    let harness = try open()
    let cpu = cpuMilliseconds()
    let start = nowNanoseconds()
    let made = try await harness.call("provider/makeContext")
    coldContext.append(milliseconds(since: start))
    coldContextCPU.append(cpuMilliseconds() - cpu)
    precondition(made["item"]?["type"] == "event")
    // Parse + expand + build the search index + search, on another fresh instance.
    let searcher = try open()
    let searchStart = nowNanoseconds()
    let found = try await query(searcher, "no such event title")
    precondition(found == 0)
    coldSearch.append(milliseconds(since: searchStart))
}
let harness = try open()
let all = try await query(harness, "")
var warm: [Double] = []
for _ in 0..<(runs * 10) {
    let start = nowNanoseconds()
    _ = try await query(harness, "review room 1")
    warm.append(milliseconds(since: start))
}
print("occurrences in the window: \(all) (options are capped at 500)")
print("")
print("| measurement | runs | p50 ms | mean ms | p99 ms | max ms |")
print("|---|---|---|---|---|---|")
print(Stats(samples: coldContext).row("parse + expand \(eventCount) events (makeContext, fresh instance), wall"))
print(Stats(samples: coldContextCPU).row("parse + expand \(eventCount) events (makeContext, fresh instance), CPU"))
print(Stats(samples: coldSearch).row("parse + expand + index + search (collect/query, fresh instance), wall"))
print(Stats(samples: warm).row("warm collect/query over the cached expansion, wall"))
let goal = Stats(samples: coldContext).percentile(0.5)
print("")
print(goal <= 100 ? "PASS: parse + expand p50 \(String(format: "%.1f", goal)) ms ≤ 100 ms" : "FAIL: parse + expand p50 \(String(format: "%.1f", goal)) ms > 100 ms")
