import ContextProviderKit

/// Entry points for the package's own checking tools (the oracle comparison's
/// `calendar-expand` and the `calendar-fuzzer`): the provider's reading and expansion, without
/// the C ABI around them. Not part of the provider's interface.
package enum CalendarCheck {
    /// Every occurrence of each file overlapping `[from, to)` (UTC seconds; floating times read
    /// in UTC), as JSON in `data/calendar/oracle/compare.py`'s format:
    /// `{"files": {"<name>": {"occurrences": [{"uid", "summary", "start", "end"}…], "error": null}}}`.
    package static func occurrencesJSON(paths: [String], from: Int, to: Int) -> [UInt8] {
        var files = JSONObject()
        for path in paths {
            let file = CalendarReader.read(path: path, calendarIndex: 0)
            let result = Expansion.expand(file.events, from: from, to: to, floatingZone: .utc)
            let rows = result.occurrences.map { occurrence -> JSONValue in
                let event = file.events[occurrence.event]
                var row = JSONObject()
                // An event without a UID is named "file#line" by the reader; the oracle writes "".
                row["uid"] = .string(event.uid == "\(event.file)#\(event.line)" ? "" : event.uid)
                row["summary"] = .string(event.summary)
                row["start"] = .string(occurrence.start.isoString)
                row["end"] = .string(occurrence.end.isoString)
                return .object(row)
            }
            var entry = JSONObject()
            entry["occurrences"] = .array(rows)
            entry["error"] = .null
            entry["diagnostics"] = .array(file.diagnostics.map { .string($0.description) })
            files[FileIO.baseName(path)] = .object(entry)
        }
        var out: [UInt8] = []
        JSONWriter.append(.object(["files": .object(files)]), to: &out)
        return out
    }

    /// Reads calendar bytes and expands them over a 30-day window and a ten-year one, as the
    /// provider would (for the fuzzer). Returns the number of occurrences; checks what must hold
    /// of any result and traps (so the fuzzer reports it) when it does not.
    @discardableResult
    package static func fuzz(_ bytes: [UInt8]) -> Int {
        var parser = ICSParser(file: "fuzz.ics")
        let (source, roots) = parser.parse(bytes)
        var reader = CalendarReader(file: "fuzz.ics", calendarIndex: 0, source: source)
        var events: [CalendarEvent] = []
        for root in roots where root.name == "VCALENDAR" {
            for child in root.children where child.name == "VTIMEZONE" { reader.readTimeZone(child) }
            for child in root.children where child.name == "VEVENT" {
                if let event = reader.readEvent(child) { events.append(event) }
            }
        }
        let from = Civil.days(year: 2025, month: 3, day: 1) * 86_400
        var total = 0
        for days in [30, 3660] {
            let to = from + days * 86_400
            let result = Expansion.expand(events, from: from, to: to, floatingZone: .utc)
            precondition(result.occurrences.count <= Expansion.maximumOccurrences, "more occurrences than the cap")
            var previous = Int.min
            for (index, occurrence) in result.occurrences.enumerated() {
                precondition(occurrence.startUTC >= previous, "occurrences out of order")
                previous = occurrence.startUTC
                precondition(occurrence.endUTC >= occurrence.startUTC, "an occurrence ends before it starts")
                precondition(Expansion.overlaps(start: occurrence.startUTC, end: occurrence.endUTC, from: from, to: to), "an occurrence outside the window")
                // The item's text, as a chosen occurrence makes it (for the first few: the provider
                // makes one per chosen occurrence, not per occurrence in the window).
                if index < 20 {
                    _ = occurrence.start.isoString
                    _ = CalendarProvider.vevent(events[occurrence.event], occurrence)
                }
            }
            total += result.occurrences.count
        }
        for event in events {
            if let rule = event.rule { _ = RecurrenceWords.describe(rule, untilText: nil) }
        }
        return total
    }
}

extension CalendarCheck {
    /// `YYYY-MM-DD` as UTC seconds at midnight.
    package static func parseDate(_ text: String) -> Int? {
        Civil.parseRFC3339(text)
    }
}

/// The fuzz entry of the CalDAV answer reader (`caldav-xml-fuzzer`).
package enum CalDAVCheck {
    /// Reads `bytes` as a server answer: the XML reader (small limits so mutations reach them),
    /// the multistatus reading, href resolution, and the calendar data as iCalendar. Traps when
    /// an invariant breaks: a tree deeper than the limit, an error offset outside the input, an
    /// href resolved to another origin. Returns the number of responses read.
    @discardableResult
    package static func fuzz(_ bytes: [UInt8]) -> Int {
        var limits = XMLReader.Limits()
        limits.maximumDepth = 24
        limits.maximumElements = 20_000
        let root: XMLNode
        do throws(XMLError) {
            root = try XMLReader.parse(bytes, limits: limits)
        } catch {
            precondition(error.offset >= 0 && error.offset <= bytes.count, "error offset outside the input")
            precondition(!error.reason.isEmpty)
            return 0
        }
        precondition(depth(root) <= limits.maximumDepth, "tree deeper than the limit")
        guard let answer = try? Multistatus(root) else { return 0 }
        let base = DAVURL("https://example.org/calendars/user/")
        for response in answer.responses {
            if let url = base?.resolve(response.href) {
                precondition(url.origin == "https://example.org", "href resolved to another origin")
            }
        }
        if let base {
            for resource in CalDAVClient.resources(answer, base).prefix(8) {
                _ = CalendarReader.read(bytes: resource.data, name: "fuzz.ics", path: "caldav:fuzz", calendarIndex: 0)
            }
        }
        return answer.responses.count
    }

    static func depth(_ node: XMLNode) -> Int {
        var deepest = 0
        var stack: [(XMLNode, Int)] = [(node, 1)]
        while let (current, level) = stack.popLast() {
            deepest = max(deepest, level)
            for child in current.children { stack.append((child, level + 1)) }
        }
        return deepest
    }
}
