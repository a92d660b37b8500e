// calendar-expand: the Calendar provider's occurrences of calendar files over a window, as JSON
// for data/calendar/oracle/compare.py (see data/calendar/README.md). Used by
// Tests/ProviderTests/CalendarCorpusTests.swift.
//
//   calendar-expand [--start YYYY-MM-DD] [--end YYYY-MM-DD] FILE…
import CalendarProvider

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@main
enum CalendarExpand {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var start = "1995-01-01"
        var end = "2031-01-01"
        var paths: [String] = []
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            switch argument {
            case "--start" where !arguments.isEmpty: start = arguments.removeFirst()
            case "--end" where !arguments.isEmpty: end = arguments.removeFirst()
            default: paths.append(argument)
            }
        }
        guard let from = CalendarCheck.parseDate(start), let to = CalendarCheck.parseDate(end), from < to, !paths.isEmpty else {
            let usage = "usage: calendar-expand [--start YYYY-MM-DD] [--end YYYY-MM-DD] FILE…\n"
            _ = usage.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            exit(2)
        }
        var json = CalendarCheck.occurrencesJSON(paths: paths, from: from, to: to)
        json.append(10)
        var written = 0
        while written < json.count {
            let count = json.withUnsafeBufferPointer { write(1, $0.baseAddress! + written, $0.count - written) }
            if count <= 0 { exit(1) }
            written += count
        }
    }
}
