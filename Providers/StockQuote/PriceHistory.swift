import ContextProviderKit

/// One problem or remark about a data file, with its place: `ACME.csv:57: …`.
struct DataDiagnostic: Hashable, Sendable {
    /// How serious it is.
    enum Severity: String, Sendable {
        /// The row was skipped or changed: the file should be fixed.
        case problem
        /// Informational, e.g. a split already recorded in Adj Close.
        case note
    }

    /// The file name or URL.
    var source: String
    /// The 1-based line, or `nil` for the whole file.
    var line: Int?
    var severity: Severity
    var message: String

    /// `source:line: message`.
    var text: String {
        if let line { return "\(source):\(line): \(message)" }
        return "\(source): \(message)"
    }
}

/// One trading day of a price file, after cleaning.
struct PriceRow: Hashable, Sendable {
    var day: Day
    var open: Double?
    var high: Double?
    var low: Double?
    var close: Double
    var adjClose: Double?
    var volume: Double?
    /// The line in the source file.
    var line: Int

    /// The day's high, or the close when the file has no High column.
    var highOrClose: Double { high ?? close }
    /// The day's low, or the close when the file has no Low column.
    var lowOrClose: Double { low ?? close }
}

/// A split-like jump between two consecutive trading days.
struct SplitEvent: Hashable, Sendable {
    /// The first day at the new price level.
    var day: Day
    /// Earlier prices are divided by this (4 for a 4-for-1 split, 0.1 for a 1-for-10 reverse split).
    var factor: Double
    /// Whether Adj Close stayed continuous over the jump (the source knew about the split).
    var matchedByAdjClose: Bool

    /// "4-for-1 split" or "1-for-10 reverse split".
    var label: String {
        factor >= 1
            ? "\(Format.plain(factor))-for-1 split" : "1-for-\(Format.plain(1 / factor)) reverse split"
    }

    /// `{"date","factor","label","inAdjClose"}`, as items and encodings carry it.
    var json: JSONValue {
        ["date": .string(day.iso), "factor": .number(factor), "label": .string(label), "inAdjClose": .bool(matchedByAdjClose)]
    }
}

/// A symbol's daily price history, read from one CSV file or HTTP body: rows in date order,
/// adjusted for detected splits, plus every problem found on the way.
struct PriceHistory: Sendable {
    var rows: [PriceRow] = []
    var diagnostics: [DataDiagnostic] = []
    var splits: [SplitEvent] = []
    var hasAdjClose = false
    /// Problems found but not kept (past `Limits.maximumDiagnostics`).
    var omittedProblems = 0

    /// Problems only (not notes).
    var problems: [DataDiagnostic] { diagnostics.filter { $0.severity == .problem } }
    /// Every problem found, kept or not.
    var problemCount: Int { problems.count + omittedProblems }
}

/// Reads daily price CSVs in the common spellings:
///
/// - Yahoo Finance: `Date,Open,High,Low,Close,Adj Close,Volume`
/// - Stooq download: `Date,Open,High,Low,Close,Volume` (any case)
/// - Stooq bulk files (`aapl.us.txt`): `<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>`
///
/// Columns are found by name, in any order; unknown columns are ignored. `Date` and `Close` are
/// required. Rows with missing or non-numeric fields, impossible prices, duplicate or out-of-order
/// dates are reported by line and skipped; a file written newest-first is read in reverse.
enum PriceParser {
    /// Split factors recognised in a one-day jump of the close (and their inverses for reverse splits).
    static let splitFactors: [Double] = [2, 3, 4, 5, 8, 10, 15, 20, 25, 30, 50, 100]
    /// How close the close-to-close ratio must be to a factor: within 3 %.
    static let splitTolerance = 0.03

    private enum Column: String, CaseIterable {
        case date = "Date", open = "Open", high = "High", low = "Low", close = "Close", adjClose = "Adj Close"
        case volume = "Volume"
    }

    private static func column(forHeader header: String) -> Column? {
        var key = ""
        for character in header.lowercased() where character.isLetter || character.isNumber { key.append(character) }
        switch key {
        case "date", "day", "datetime", "timestamp": return .date
        case "open": return .open
        case "high": return .high
        case "low": return .low
        case "close", "last", "price": return .close
        case "adjclose", "adjustedclose", "closeadj": return .adjClose
        case "volume", "vol": return .volume
        default: return nil
        }
    }

    /// Parses the bytes of one file; `source` names it in diagnostics.
    package static func parse(_ bytes: [UInt8], source: String) -> PriceHistory {
        var history = PriceHistory()
        func report(_ line: Int?, _ message: @autoclosure () -> String, _ severity: DataDiagnostic.Severity = .problem) {
            guard history.diagnostics.count < Limits.maximumDiagnostics else {
                if severity == .problem { history.omittedProblems += 1 }
                return
            }
            history.diagnostics.append(DataDiagnostic(source: source, line: line, severity: severity, message: message()))
        }
        var lines = CSV.lines(bytes)
        guard let headerIndex = lines.firstIndex(where: { !CSV.isBlank($0.bytes) }) else {
            report(nil, "the file is empty; expected a header such as Date,Open,High,Low,Close,Volume and one row per day")
            return history
        }
        let header = lines[headerIndex]
        lines.removeFirst(headerIndex + 1)
        guard header.bytes.count <= Limits.maximumLine else {
            report(header.number, "the header line is longer than \(Limits.maximumLine >> 10) KB (\"\(Limits.quote(header.bytes))\"); expected Date,Open,High,Low,Close,Volume")
            return history
        }
        let separator = CSV.separator(forHeader: header.bytes)
        let names = CSV.fields(header.bytes, separator: separator)
        var indexes: [Column: Int] = [:]
        for (index, name) in names.enumerated() {
            if let column = column(forHeader: name), indexes[column] == nil { indexes[column] = index }
        }
        guard let dateIndex = indexes[.date], indexes[.close] != nil else {
            let missing = [indexes[.date] == nil ? "Date" : nil, indexes[.close] == nil ? "Close" : nil]
                .compactMap { $0 }.joined(separator: " and ")
            report(
                header.number,
                "the header \"\(Limits.quote(names.joined(separator: ",")))\" has no \(missing) column; expected Date,Open,High,Low,Close,Volume "
                    + "(Yahoo adds Adj Close; Stooq bulk files use <DATE>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>)")
            return history
        }
        history.hasAdjClose = indexes[.adjClose] != nil
        let needed = (indexes.values.max() ?? 0) + 1

        // 1. Rows that parse.
        var parsed: [PriceRow] = []
        parsed.reserveCapacity(lines.count)
        rows: for line in lines {
            guard line.bytes.count <= Limits.maximumLine else {
                report(line.number, "the line is longer than \(Limits.maximumLine >> 10) KB; row skipped")
                continue
            }
            if CSV.isBlank(line.bytes) { continue }
            let fields = CSV.fields(line.bytes, separator: separator)
            guard fields.count >= needed else {
                report(line.number, "missing fields: \(fields.count) of the header's \(names.count) columns; row skipped")
                continue
            }
            guard let day = Day.parse(Array(trimmed(fields[dateIndex]).utf8)) else {
                report(line.number, "Date \"\(Limits.quote(trimmed(fields[dateIndex])))\" is not a date like 2024-01-31 or 20240131; row skipped")
                continue
            }
            var values: [Column: Double] = [:]
            for column in Column.allCases where column != .date {
                guard let index = indexes[column] else { continue }
                let text = trimmed(fields[index])
                guard !text.isEmpty else {
                    report(line.number, "\(column.rawValue) is empty; row skipped")
                    continue rows
                }
                guard let value = decimal(text) else {
                    report(line.number, "\(column.rawValue) \"\(Limits.quote(text))\" is not a number; row skipped")
                    continue rows
                }
                let positive = column != .volume
                guard positive ? value > 0 : value >= 0 else {
                    report(line.number, "\(column.rawValue) \(Limits.quote(text)) must be \(positive ? "greater than zero" : "zero or more"); row skipped")
                    continue rows
                }
                guard positive ? Limits.priceRange.contains(value) : value <= Limits.maximumVolume else {
                    let range = positive ? "\(Format.plain(Limits.priceRange.lowerBound))–\(Format.plain(Limits.priceRange.upperBound))" : "0–\(Format.plain(Limits.maximumVolume))"
                    report(line.number, "\(column.rawValue) \(Limits.quote(text)) is out of range (\(range)); row skipped")
                    continue rows
                }
                values[column] = value
            }
            guard let close = values[.close] else { continue }
            let row = PriceRow(
                day: day, open: values[.open], high: values[.high], low: values[.low], close: close,
                adjClose: values[.adjClose], volume: values[.volume], line: line.number)
            if let problem = inconsistency(row) {
                report(line.number, "\(problem); row skipped")
                continue
            }
            parsed.append(row)
        }

        // 2. Date order: newest-first files are reversed; duplicates and stray rows are skipped.
        if parsed.count >= 2, parsed[0].day > parsed[parsed.count - 1].day {
            parsed.reverse()
            report(nil, "rows are newest first; read in reverse order", .note)
        }
        var kept: [PriceRow] = []
        kept.reserveCapacity(parsed.count)
        for row in parsed {
            guard let last = kept.last else {
                kept.append(row)
                continue
            }
            if row.day > last.day {
                kept.append(row)
            } else if row.day == last.day {
                report(row.line, "duplicate date \(row.day.iso) (first on line \(last.line)); row skipped")
            } else if kept.count >= 2, row.day > kept[kept.count - 2].day {
                // The previous row was the stray one (e.g. a mistyped year).
                kept.removeLast()
                report(
                    last.line,
                    "date \(last.day.iso) is out of order (the next row, line \(row.line), is \(row.day.iso)); rows must be in date order; row skipped")
                kept.append(row)
            } else {
                report(
                    row.line,
                    "date \(row.day.iso) is out of order (after \(last.day.iso) on line \(last.line)); rows must be in date order; row skipped")
            }
        }

        // 3. Split-like jumps: earlier prices are put on the new scale.
        var factors = [Double](repeating: 1, count: kept.count)
        for index in kept.indices.dropFirst() {
            if let factor = splitFactor(kept[index - 1].close / kept[index].close) { factors[index - 1] = factor }
        }
        // The product of the factors applied to a row (counted back from the last) stays within
        // 1/maximumSplitAdjustment…maximumSplitAdjustment; a split that would leave it is not applied.
        var vetoed = Set<Int>()
        var product = 1.0
        for index in kept.indices.reversed() where factors[index] != 1 {
            let next = product * factors[index]
            if next > Limits.maximumSplitAdjustment || next < 1 / Limits.maximumSplitAdjustment {
                vetoed.insert(index)
                factors[index] = 1
            } else {
                product = next
            }
        }
        for index in kept.indices.dropFirst() {
            let previous = kept[index - 1], current = kept[index]
            if vetoed.contains(index - 1) {
                report(
                    current.line,
                    "split-like jump: close went from \(Format.plain(previous.close)) on \(previous.day.iso) to \(Format.plain(current.close)); "
                        + "not adjusted, because with the later splits earlier prices would change more than \(Format.plain(Limits.maximumSplitAdjustment))-fold")
                continue
            }
            guard factors[index - 1] != 1 else { continue }
            let factor = factors[index - 1]
            var matched = false
            if let before = previous.adjClose, let after = current.adjClose {
                matched = abs(before / after - 1) < 0.25
            }
            let event = SplitEvent(day: current.day, factor: factor, matchedByAdjClose: matched)
            history.splits.append(event)
            let move = "close went from \(Format.plain(previous.close)) on \(previous.day.iso) to \(Format.plain(current.close))"
            let handling = factor >= 1
                ? "prices before \(current.day.iso) are divided by \(Format.plain(factor)) and volumes multiplied by \(Format.plain(factor))"
                : "prices before \(current.day.iso) are multiplied by \(Format.plain(1 / factor)) and volumes divided by \(Format.plain(1 / factor))"
            if matched {
                report(current.line, "\(event.label) on \(current.day.iso) (\(move); Adj Close already reflects it): \(handling)", .note)
            } else {
                let why = history.hasAdjClose ? "Adj Close shows the same jump" : "the file has no Adj Close column to confirm it"
                report(
                    current.line,
                    "split-like jump: \(move) (a factor of \(Format.plain(factor))) and \(why); treated as a \(event.label): \(handling). "
                        + "If it was a real price move, fix the row or use split-adjusted data")
            }
        }
        var cumulative = 1.0
        for index in kept.indices.reversed() {
            cumulative *= factors[index]
            guard cumulative != 1 else { continue }
            func scale(_ value: Double?) -> Double? { value.map { Format.round6($0 / cumulative) } }
            kept[index].open = scale(kept[index].open)
            kept[index].high = scale(kept[index].high)
            kept[index].low = scale(kept[index].low)
            kept[index].close = Format.round6(kept[index].close / cumulative)
            kept[index].volume = kept[index].volume.map { ($0 * cumulative).rounded() }
        }
        history.rows = kept
        // Report in file order (problems are found in several passes).
        history.diagnostics = history.diagnostics.enumerated().sorted {
            ($0.element.line ?? 0, $0.offset) < ($1.element.line ?? 0, $1.offset)
        }.map(\.element)
        return history
    }

    /// The split factor a close-to-close ratio (`previous / current`) is close to, or `nil`.
    static func splitFactor(_ ratio: Double) -> Double? {
        guard ratio.isFinite, ratio > 0 else { return nil }
        for factor in splitFactors {
            if abs(ratio / factor - 1) <= splitTolerance { return factor }
            if abs(ratio * factor - 1) <= splitTolerance { return 1 / factor }
        }
        return nil
    }

    /// Why a row's prices cannot all be true, or `nil`.
    private static func inconsistency(_ row: PriceRow) -> String? {
        let slack = 1e-9
        if let high = row.high, let low = row.low, high < low - slack {
            return "High \(Format.plain(high)) is below Low \(Format.plain(low))"
        }
        for (name, value) in [("Open", row.open), ("Close", row.close)] {
            guard let value else { continue }
            if let high = row.high, value > high + slack { return "\(name) \(Format.plain(value)) is above High \(Format.plain(high))" }
            if let low = row.low, value < low - slack { return "\(name) \(Format.plain(value)) is below Low \(Format.plain(low))" }
        }
        return nil
    }

    /// A plain decimal number (`12`, `-1.5`, `1.2e3`): digits, one `.`, an optional exponent;
    /// `nil` for anything else (`null`, `nan`, `inf`, hex floats, thousands separators) and for
    /// numbers that do not fit a finite `Double`.
    static func decimal(_ text: String) -> Double? {
        let bytes = Array(text.utf8.prefix(65))
        guard !bytes.isEmpty, bytes.count <= 64 else { return nil }
        var index = 0
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") { index = 1 }
        var sawDigit = false
        var sawPoint = false
        var sawExponent = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
            case UInt8(ascii: ".") where !sawPoint && !sawExponent: sawPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard sawDigit, !sawExponent else { return nil }
                sawExponent = true
                sawDigit = false
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") || bytes[index + 1] == UInt8(ascii: "+") { index += 1 }
            default: return nil
            }
            index += 1
        }
        guard sawDigit, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    private static func trimmed(_ text: String) -> String {
        var slice = Substring(text)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}

/// Minimal CSV reading: lines (LF or CRLF, UTF-8 BOM dropped) and fields with RFC 4180 quotes.
enum CSV {
    struct Line {
        var number: Int
        var bytes: ArraySlice<UInt8>
    }

    static func lines(_ bytes: [UInt8]) -> [Line] {
        var result: [Line] = []
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var number = 1
        var index = start
        while index <= bytes.count {
            if index == bytes.count || bytes[index] == 0x0A {
                var end = index
                if end > start, bytes[end - 1] == 0x0D { end -= 1 }
                if index < bytes.count || end > start { result.append(Line(number: number, bytes: bytes[start..<end])) }
                number += 1
                start = index + 1
            }
            index += 1
        }
        return result
    }

    static func isBlank(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") }
    }

    /// `;` when the header has semicolons and no commas (European spreadsheets), else `,`.
    static func separator(forHeader bytes: ArraySlice<UInt8>) -> UInt8 {
        bytes.contains(UInt8(ascii: ",")) || !bytes.contains(UInt8(ascii: ";")) ? UInt8(ascii: ",") : UInt8(ascii: ";")
    }

    static func fields(_ bytes: ArraySlice<UInt8>, separator: UInt8 = UInt8(ascii: ",")) -> [String] {
        var fields: [String] = []
        var current: [UInt8] = []
        var quoted = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.endIndex, bytes[index + 1] == UInt8(ascii: "\"") {
                        current.append(byte)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") && current.allSatisfy({ $0 == 0x20 }) {
                current.removeAll()
                quoted = true
            } else if byte == separator {
                fields.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            } else {
                current.append(byte)
            }
            index += 1
        }
        fields.append(String(decoding: current, as: UTF8.self))
        return fields
    }
}
