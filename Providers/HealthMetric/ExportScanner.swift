#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit

/// A streaming reader for the Health app's `export.xml`.
///
/// The file is read in fixed-size chunks into one buffer and scanned byte by byte: the XML
/// declaration, comments, CDATA and the `DOCTYPE` with its internal DTD are skipped; `Record`
/// start tags (self-closing, or with `MetadataEntry` children and a `</Record>`) are parsed for
/// `type`, `unit`, `value`, `startDate`, `endDate` and `sourceName`, with XML entities decoded.
/// Memory stays flat: the buffer only grows when one element is longer than a chunk.
struct ExportScanner {
    /// Bytes per `read`.
    static let defaultChunkSize = 1 << 20
    /// No single element may be longer than this.
    static let maximumElementLength = 16 << 20

    /// Scans what `read` delivers (it fills up to `count` bytes at the pointer and answers how
    /// many, 0 at the end).
    ///
    /// The work stays linear in the input whatever the chunk size: when a construct (a tag, a
    /// comment, the DTD) is not complete in the buffer, it is scanned again only once at least as
    /// many new bytes as it already has have arrived, so a long element is rescanned O(log n)
    /// times, not once per chunk.
    package static func scan(
        fileName: String, chunkSize requestedChunkSize: Int,
        read: ChunkSource
    ) throws(ProviderError) -> HealthData {
        let chunkSize = FileSystem.chunkSize(requestedChunkSize)
        var state = ScanState(fileName: fileName)
        var capacity = chunkSize * 2
        var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var start = 0
        var end = 0
        var eof = false
        /// The buffer must hold this many bytes before the pending construct is scanned again.
        var wanted = 0
        /// Set when the buffer cannot grow and the pending construct was scanned without waiting.
        var scannedAtLimit = false
        while true {
            if end >= wanted || eof {
                start = state.process(buffer, start: start, end: end, eof: eof)
                if eof || state.stopped { break }
                if start > 0 {
                    if end > start { memmove(buffer, buffer + start, end - start) }
                    end -= start
                    start = 0
                }
                wanted = end * 2
            }
            if capacity - end < chunkSize {
                guard capacity < Self.maximumElementLength else {
                    if !scannedAtLimit, end < wanted {
                        // Scan what is there before giving up on the element.
                        scannedAtLimit = true
                        wanted = 0
                        continue
                    }
                    state.report.truncation = "\(state.fileName):\(state.line): an element is longer than \(Self.maximumElementLength >> 20) MB; reading stopped there"
                    break
                }
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                grown.update(from: buffer, count: end)
                buffer.deallocate()
                buffer = grown
                capacity *= 2
            }
            let count = try read(buffer + end, chunkSize)
            scannedAtLimit = false
            if count <= 0 {
                eof = true
            } else {
                end += min(count, chunkSize)
                state.report.bytes &+= UInt64(min(count, chunkSize))
            }
        }
        state.finish()
        return HealthData(days: state.accumulator.reduce(), report: state.report)
    }
}

/// A sample parsed from a `<Record>` start tag, added when its element closes.
private struct PendingSample {
    var metric: Metric
    var source: UInt32
    var day: Int
    var value: Double
}

/// An attribute value: a range of the buffer, or decoded bytes when it held entities.
private struct AttributeValue {
    var pointer: UnsafePointer<UInt8>
    var count: Int

    var string: String { String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self) }

    /// The value as quoted in a message: at most `Limits.quoteBytes` bytes.
    var quoted: String { Limits.quote(pointer, count) }

    func equals(_ bytes: [UInt8]) -> Bool {
        bytes.count == count && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, pointer, count) == 0 }
    }
}

private enum Byte {
    static let lessThan: UInt8 = 0x3C
    static let greaterThan: UInt8 = 0x3E
    static let slash: UInt8 = 0x2F
    static let question: UInt8 = 0x3F
    static let bang: UInt8 = 0x21
    static let newline: UInt8 = 0x0A
    static let quote: UInt8 = 0x22
    static let apostrophe: UInt8 = 0x27
    static let equals: UInt8 = 0x3D
    static let ampersand: UInt8 = 0x26
    static let openBracket: UInt8 = 0x5B
    static let closeBracket: UInt8 = 0x5D
    static let dash: UInt8 = 0x2D

    @inline(__always) static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }
}

/// The scanner's state between chunks.
private struct ScanState {
    let fileName: String
    var report = IngestReport()
    var accumulator = SampleAccumulator()
    /// The line of the first unprocessed byte.
    var line = 1
    var stopped = false
    var sawRoot = false
    var closedRoot = false
    var correlationDepth = 0
    var pending: PendingSample?
    var pendingOpen = false
    var pendingLine = 0
    /// Unknown types by the hash of their raw bytes.
    var unknown: [UInt64: (name: String, count: UInt64)] = [:]
    /// Records of unknown types past `Limits.maximumUnknownNames` distinct names.
    var otherUnknown: UInt64 = 0
    /// Units seen, by raw bytes.
    var units: [([UInt8], HealthUnit?)] = []
    /// Decoded attribute values of the current element (freed after it).
    var decoded: [UnsafeMutableBufferPointer<UInt8>] = []

    let identifiers: [[UInt8]] = Metric.allCases.map { Array($0.healthIdentifier.utf8) }
    static let recordName = Array("Record".utf8)
    static let correlationName = Array("Correlation".utf8)
    static let rootName = Array("HealthData".utf8)
    static let workoutName = Array("Workout".utf8)
    static let activityName = Array("ActivitySummary".utf8)

    init(fileName: String) {
        self.fileName = fileName
    }

    /// Processes every complete construct in `buffer[start..<end]`; answers where to continue.
    mutating func process(_ buffer: UnsafeMutablePointer<UInt8>, start startIndex: Int, end: Int, eof: Bool) -> Int {
        var start = startIndex
        while start < end {
            var index = start
            while index < end, buffer[index] != Byte.lessThan {
                if buffer[index] == Byte.newline { line += 1 }
                index += 1
            }
            start = index
            if index == end { break }
            if end - index < 12, !eof { break }
            let next = index + 1 < end ? buffer[index + 1] : 0
            let constructEnd: Int?
            switch next {
            case Byte.question:
                constructEnd = find(buffer, "?>", from: index + 2, end: end)
            case Byte.bang:
                if matches(buffer, "<!--", at: index, end: end) {
                    constructEnd = find(buffer, "-->", from: index + 4, end: end)
                } else if matches(buffer, "<![CDATA[", at: index, end: end) {
                    constructEnd = find(buffer, "]]>", from: index + 9, end: end)
                } else {
                    constructEnd = declarationEnd(buffer, from: index + 2, end: end)
                }
            case Byte.slash:
                if let close = memchrIndex(buffer, Byte.greaterThan, from: index + 2, end: end) {
                    endTag(buffer, nameStart: index + 2, end: close)
                    constructEnd = close + 1
                } else {
                    constructEnd = nil
                }
            default:
                constructEnd = startTag(buffer, at: index, end: end)
            }
            guard let constructEnd else {
                if eof { truncated(buffer, at: index, end: end) }
                return start
            }
            // Start tags count their own lines; the others are counted here.
            if next == Byte.question || next == Byte.bang || next == Byte.slash {
                line += countNewlines(buffer, from: index, to: constructEnd)
            }
            start = constructEnd
            if stopped { return start }
        }
        return start
    }

    /// Handles a start tag at `index`; answers the index after its `>`, or `nil` when the tag is
    /// not complete in the buffer.
    mutating func startTag(_ buffer: UnsafeMutablePointer<UInt8>, at index: Int, end: Int) -> Int? {
        var cursor = index + 1
        var newlines = 0
        while cursor < end {
            let byte = buffer[cursor]
            if byte == Byte.quote || byte == Byte.apostrophe {
                // Jump over the quoted value (most of a tag's bytes) with memchr.
                guard let close = memchrIndex(buffer, byte, from: cursor + 1, end: end) else { return nil }
                var newline = cursor + 1
                while let found = memchrIndex(buffer, Byte.newline, from: newline, end: close) {
                    newlines += 1
                    newline = found + 1
                }
                cursor = close + 1
                continue
            }
            if byte == Byte.greaterThan { break }
            if byte == Byte.newline { newlines += 1 }
            cursor += 1
        }
        guard cursor < end else { return nil }
        let tagLine = line
        line += newlines
        let selfClosing = buffer[cursor - 1] == Byte.slash
        var nameEnd = index + 1
        while nameEnd < cursor, !Byte.isSpace(buffer[nameEnd]), buffer[nameEnd] != Byte.slash { nameEnd += 1 }
        let name = UnsafePointer(buffer + index + 1)
        let nameLength = nameEnd - index - 1
        if equals(name, nameLength, Self.recordName) {
            if correlationDepth == 0 {
                record(buffer, from: nameEnd, to: selfClosing ? cursor - 1 : cursor, line: tagLine, selfClosing: selfClosing)
            }
        } else if equals(name, nameLength, Self.correlationName) {
            if !selfClosing { correlationDepth += 1 }
        } else if equals(name, nameLength, Self.rootName) {
            sawRoot = true
            if selfClosing { closedRoot = true }
        } else if equals(name, nameLength, Self.workoutName) {
            report.workouts += 1
        } else if equals(name, nameLength, Self.activityName) {
            report.activitySummaries += 1
        }
        return cursor + 1
    }

    mutating func endTag(_ buffer: UnsafeMutablePointer<UInt8>, nameStart: Int, end: Int) {
        var nameEnd = nameStart
        while nameEnd < end, !Byte.isSpace(buffer[nameEnd]) { nameEnd += 1 }
        let name = UnsafePointer(buffer + nameStart)
        let length = nameEnd - nameStart
        if equals(name, length, Self.recordName) {
            if correlationDepth == 0, pendingOpen {
                if let sample = pending { add(sample) }
                pending = nil
                pendingOpen = false
            }
        } else if equals(name, length, Self.correlationName) {
            correlationDepth = max(0, correlationDepth - 1)
        } else if equals(name, length, Self.rootName) {
            closedRoot = true
        }
    }

    @inline(__always)
    mutating func add(_ sample: PendingSample) {
        accumulator.add(sample.metric, source: sample.source, day: sample.day, value: sample.value)
        report.used += 1
    }

    /// The attributes of a `Record` that matter, from `buffer[from..<to]`; `nil` (reported as
    /// malformed) when one of them cannot be read.
    private mutating func recordAttributes(
        _ buffer: UnsafeMutablePointer<UInt8>, from: Int, to: Int, line recordLine: Int, selfClosing: Bool
    ) -> RecordAttributes? {
        var attributes = RecordAttributes()
        var cursor = from
        while cursor < to {
            while cursor < to, Byte.isSpace(buffer[cursor]) { cursor += 1 }
            if cursor >= to { break }
            let nameStart = cursor
            while cursor < to, buffer[cursor] != Byte.equals, !Byte.isSpace(buffer[cursor]) { cursor += 1 }
            let nameLength = cursor - nameStart
            while cursor < to, Byte.isSpace(buffer[cursor]) { cursor += 1 }
            guard cursor < to, buffer[cursor] == Byte.equals, nameLength > 0 else {
                malformed("\(fileName):\(recordLine): Record has a malformed attribute near \"\(snippet(buffer, nameStart, to))\"; skipped", selfClosing)
                return nil
            }
            cursor += 1
            while cursor < to, Byte.isSpace(buffer[cursor]) { cursor += 1 }
            guard cursor < to, buffer[cursor] == Byte.quote || buffer[cursor] == Byte.apostrophe else {
                malformed("\(fileName):\(recordLine): Record attribute \(snippet(buffer, nameStart, nameStart + nameLength)) has no quoted value; skipped", selfClosing)
                return nil
            }
            let quote = buffer[cursor]
            cursor += 1
            let valueStart = cursor
            guard let close = memchrIndex(buffer, quote, from: cursor, end: to) else {
                malformed("\(fileName):\(recordLine): Record attribute value is not closed; skipped", selfClosing)
                return nil
            }
            cursor = close
            var attribute = AttributeValue(pointer: UnsafePointer(buffer + valueStart), count: cursor - valueStart)
            cursor += 1
            let name = buffer + nameStart
            let slot: Int
            switch nameLength {
            case 4 where name[0] == 0x74 && name[1] == 0x79 && name[2] == 0x70 && name[3] == 0x65: slot = 0  // type
            case 4 where name[0] == 0x75 && name[1] == 0x6E && name[2] == 0x69 && name[3] == 0x74: slot = 1  // unit
            case 5 where memcmp(name, "value", 5) == 0: slot = 2
            case 9 where memcmp(name, "startDate", 9) == 0: slot = 3
            case 7 where memcmp(name, "endDate", 7) == 0: slot = 4
            case 10 where memcmp(name, "sourceName", 10) == 0: slot = 5
            default: continue
            }
            if memchrIndex(buffer, Byte.ampersand, from: valueStart, end: close) != nil {
                guard let decodedValue = decodeEntities(attribute) else {
                    malformed("\(fileName):\(recordLine): Record attribute \(snippet(buffer, nameStart, nameStart + nameLength)) has an unknown entity in \"\(attribute.quoted)\"; skipped", selfClosing)
                    return nil
                }
                attribute = decodedValue
            }
            switch slot {
            case 0: attributes.type = attribute
            case 1: attributes.unit = attribute
            case 2: attributes.value = attribute
            case 3: attributes.startDate = attribute
            case 4: attributes.endDate = attribute
            default: attributes.source = attribute
            }
        }
        return attributes
    }

    /// The metric a `Record` type names; `nil`, counted among the unknown types, for any other.
    private mutating func metric(named type: AttributeValue) -> Metric? {
        for index in identifiers.indices where type.equals(identifiers[index]) {
            return Metric(rawValue: UInt8(index))
        }
        let hash = fnv1a(type.pointer, type.count)
        if let entry = unknown[hash] {
            unknown[hash] = (entry.name, entry.count &+ 1)
        } else if unknown.count < Limits.maximumUnknownNames {
            unknown[hash] = (type.count <= 200 ? type.string : type.quoted, 1)
        } else {
            otherUnknown &+= 1
        }
        return nil
    }

    /// Parses a `Record`'s attributes in `buffer[from..<to]`.
    mutating func record(_ buffer: UnsafeMutablePointer<UInt8>, from: Int, to: Int, line recordLine: Int, selfClosing: Bool) {
        report.records += 1
        defer {
            for value in decoded { value.deallocate() }
            decoded.removeAll(keepingCapacity: true)
        }
        guard let attributes = recordAttributes(buffer, from: from, to: to, line: recordLine, selfClosing: selfClosing) else { return }
        let (unit, value, startDate, endDate, source) = (attributes.unit, attributes.value, attributes.startDate, attributes.endDate, attributes.source)
        guard let type = attributes.type else {
            return malformed("\(fileName):\(recordLine): Record has no type attribute; skipped", selfClosing)
        }
        guard let metric = metric(named: type) else { return skipped(selfClosing) }
        guard let startDate, let endDate, let value else {
            let missing = [startDate == nil ? "startDate" : nil, endDate == nil ? "endDate" : nil, value == nil ? "value" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record lacks \(missing); skipped", selfClosing)
        }
        guard let start = CivilDate.parseTimestamp(startDate.pointer, count: startDate.count) else {
            return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record has startDate \"\(startDate.quoted)\", not a date like 2024-01-02 08:00:00 +0100; skipped", selfClosing)
        }
        guard let finish = CivilDate.parseTimestamp(endDate.pointer, count: endDate.count) else {
            return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record has endDate \"\(endDate.quoted)\", not a date like 2024-01-02 08:00:00 +0100; skipped", selfClosing)
        }
        guard start.day >= Limits.firstDay, start.day <= Limits.lastDay else {
            return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record has startDate \"\(startDate.quoted)\", outside the years \(Limits.years.lowerBound)–\(Limits.years.upperBound); skipped", selfClosing)
        }
        let sourceIndex: UInt32
        if let source {
            sourceIndex = accumulator.source(hash: fnv1a(source.pointer, source.count)) { source.count <= 200 ? source.string : source.quoted }
        } else {
            sourceIndex = accumulator.source(hash: 0) { "Unknown source" }
        }
        let sample: PendingSample
        if metric == .sleep {
            guard let state = SleepValue(value) else {
                return malformed("\(fileName):\(recordLine): sleep Record has value \"\(value.quoted)\", not an HKCategoryValueSleepAnalysis value; skipped", selfClosing)
            }
            let seconds = finish.seconds - start.seconds
            guard seconds >= 0, seconds <= 86_400 else {
                return malformed("\(fileName):\(recordLine): sleep Record lasts \(seconds) s (endDate before startDate, or over a day); skipped", selfClosing)
            }
            guard state == .asleep else { return skipped(selfClosing) }
            // A night belongs to the day it ends: sleep ending from 18:00 on counts for the next day.
            let night = finish.day + (CivilDate.hour(endDate.pointer) >= 18 ? 1 : 0)
            sample = PendingSample(metric: metric, source: sourceIndex, day: night, value: Double(seconds) / 3600)
        } else {
            guard let number = parseNumber(value.pointer, value.count), number.isFinite else {
                return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record has value \"\(value.quoted)\", not a number; skipped", selfClosing)
            }
            let healthUnit = lookUpUnit(unit)
            guard let healthUnit, healthUnit.fits(metric) else {
                return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record has unit \"\(unit?.quoted ?? "")\", which the provider cannot convert to \(metric.baseUnit.rawValue); skipped", selfClosing)
            }
            let base = number * healthUnit.factorToBase
            guard base >= 0, base <= metric.maximumSample else {
                return malformed("\(fileName):\(recordLine): \(metric.healthIdentifier) Record has value \(value.quoted) \(unit?.quoted ?? ""), outside 0…\(formatPlain(metric.maximumSample)) \(metric.baseUnit.rawValue); skipped", selfClosing)
            }
            sample = PendingSample(metric: metric, source: sourceIndex, day: start.day, value: base)
        }
        if selfClosing {
            add(sample)
        } else {
            pending = sample
            pendingOpen = true
            pendingLine = recordLine
        }
    }

    mutating func malformed(_ message: String, _ selfClosing: Bool) {
        report.problem(message)
        skipped(selfClosing)
    }

    mutating func skipped(_ selfClosing: Bool) {
        if !selfClosing {
            pending = nil
            pendingOpen = true
        }
    }

    mutating func lookUpUnit(_ unit: AttributeValue?) -> HealthUnit? {
        guard let unit else { return .count }
        for (bytes, known) in units where unit.equals(bytes) { return known }
        let known = unit.count <= 32 ? HealthUnit(text: unit.string) : nil
        if units.count < 64 { units.append((Array(UnsafeBufferPointer(start: unit.pointer, count: unit.count)), known)) }
        return known
    }

    /// Decodes `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric references; `nil` for an
    /// unknown entity.
    mutating func decodeEntities(_ value: AttributeValue) -> AttributeValue? {
        guard let text = XMLEntities.decode(UnsafeBufferPointer(start: value.pointer, count: value.count)) else { return nil }
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(text.count, 1))
        _ = storage.initialize(from: text)
        decoded.append(storage)
        return AttributeValue(pointer: UnsafePointer(storage.baseAddress!), count: text.count)
    }

    /// At the end of the file with a construct still open at `index`.
    mutating func truncated(_ buffer: UnsafeMutablePointer<UInt8>, at index: Int, end: Int) {
        let what = snippet(buffer, index, min(end, index + 60))
        report.truncation = "\(fileName):\(line): the file ends inside \"\(what)…\" (\(end - index) bytes); everything before it was used"
        stopped = true
    }

    /// Called after the last byte.
    mutating func finish() {
        if accumulator.dropped > 0 {
            report.problem("\(fileName): \(accumulator.dropped) records were dropped: the file has more than \(Limits.maximumBuckets) distinct metric, source and day combinations")
        }
        if report.truncation == nil {
            if pendingOpen {
                report.truncation = "\(fileName):\(pendingLine): the file ends inside a Record (no </Record>); that record was skipped, everything before it was used"
            } else if sawRoot, !closedRoot {
                report.truncation = "\(fileName):\(line): the file ends without </HealthData>; everything read was used"
            }
        } else if pendingOpen, let truncation = report.truncation {
            report.truncation = truncation + "; the open Record from line \(pendingLine) was skipped"
        }
        if !sawRoot, report.records == 0 {
            report.problems.insert("\(fileName): no <HealthData> element; this does not look like an Apple Health export.xml", at: 0)
        }
        for (_, entry) in unknown { report.unknownTypes[entry.name, default: 0] &+= entry.count }
        if otherUnknown > 0 { report.unknownTypes[Limits.otherUnknownName, default: 0] &+= otherUnknown }
    }

    // MARK: Byte helpers

    func snippet(_ buffer: UnsafeMutablePointer<UInt8>, _ from: Int, _ to: Int) -> String {
        let count = max(0, min(to - from, 60))
        return String(decoding: UnsafeBufferPointer(start: buffer + from, count: count), as: UTF8.self)
            .replacingNewlines()
    }

    @inline(__always)
    func equals(_ pointer: UnsafePointer<UInt8>, _ count: Int, _ bytes: [UInt8]) -> Bool {
        count == bytes.count && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, pointer, count) == 0 }
    }

    func matches(_ buffer: UnsafeMutablePointer<UInt8>, _ literal: StaticString, at index: Int, end: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        return index + count <= end && memcmp(buffer + index, literal.utf8Start, count) == 0
    }

    /// The index just past the first `literal` at or after `from`.
    func find(_ buffer: UnsafeMutablePointer<UInt8>, _ literal: StaticString, from: Int, end: Int) -> Int? {
        let count = literal.utf8CodeUnitCount
        let first = literal.utf8Start[0]
        var index = from
        while let found = memchrIndex(buffer, first, from: index, end: end) {
            if found + count > end { return nil }
            if memcmp(buffer + found, literal.utf8Start, count) == 0 { return found + count }
            index = found + 1
        }
        return nil
    }

    @inline(__always)
    func memchrIndex(_ buffer: UnsafeMutablePointer<UInt8>, _ byte: UInt8, from: Int, end: Int) -> Int? {
        guard from < end, let found = memchr(buffer + from, Int32(byte), end - from) else { return nil }
        return buffer.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// The end of a `<!DOCTYPE …>` (or other declaration), skipping an internal subset in `[…]`
    /// with its own declarations, quoted strings and comments.
    func declarationEnd(_ buffer: UnsafeMutablePointer<UInt8>, from: Int, end: Int) -> Int? {
        var index = from
        var inSubset = false
        var quote: UInt8 = 0
        while index < end {
            let byte = buffer[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == Byte.quote || byte == Byte.apostrophe {
                quote = byte
            } else if inSubset, byte == Byte.lessThan, matches(buffer, "<!--", at: index, end: end) {
                guard let close = find(buffer, "-->", from: index + 4, end: end) else { return nil }
                index = close
                continue
            } else if byte == Byte.openBracket {
                inSubset = true
            } else if byte == Byte.closeBracket {
                inSubset = false
            } else if byte == Byte.greaterThan, !inSubset {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    func countNewlines(_ buffer: UnsafeMutablePointer<UInt8>, from: Int, to: Int) -> Int {
        var count = 0
        for index in from..<to where buffer[index] == Byte.newline { count += 1 }
        return count
    }
}

/// The states of an `HKCategoryTypeIdentifierSleepAnalysis` record.
enum SleepValue {
    case inBed
    case awake
    case asleep

    /// Reads `HKCategoryValueSleepAnalysis…` (`InBed`, `Awake`, `Asleep`, `AsleepCore`,
    /// `AsleepDeep`, `AsleepREM`, `AsleepUnspecified`) or the raw numbers 0 (in bed), 1 (asleep),
    /// 2 (awake), 3–5 (stages).
    fileprivate init?(_ value: AttributeValue) {
        guard value.count <= 64 else { return nil }
        self.init(text: value.string)
    }

    init?(text: String) {
        let prefix = "HKCategoryValueSleepAnalysis"
        let name = text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
        switch name {
        case "InBed", "0": self = .inBed
        case "Awake", "2": self = .awake
        case "Asleep", "AsleepCore", "AsleepDeep", "AsleepREM", "AsleepUnspecified", "1", "3", "4", "5": self = .asleep
        default: return nil
        }
    }
}

/// XML's predefined entities and character references.
enum XMLEntities {
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == Byte.ampersand else {
                output.append(byte)
                index += 1
                continue
            }
            var close = index + 1
            while close < bytes.count, bytes[close] != 0x3B, close - index < 12 { close += 1 }
            guard close < bytes.count, bytes[close] == 0x3B else { return nil }
            let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(index + 1)..<close]), as: UTF8.self)
            switch name {
            case "amp": output.append(0x26)
            case "lt": output.append(0x3C)
            case "gt": output.append(0x3E)
            case "quot": output.append(0x22)
            case "apos": output.append(0x27)
            default:
                guard name.hasPrefix("#") else { return nil }
                let digits = name.dropFirst()
                let code: UInt32? =
                    digits.hasPrefix("x") || digits.hasPrefix("X")
                    ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
                guard let code, let scalar = Unicode.Scalar(code) else { return nil }
                output.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
            index = close + 1
        }
        return output
    }
}

/// Exact powers of ten.
private let decimalPowers: [Double] = [
    1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
]

/// Parses a decimal number (`123`, `-4.5`, `1e3`, `.5`); `nil` when the whole text is not one.
@inline(__always)
func parseNumber(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> Double? {
    var index = 0
    while index < count, Byte.isSpace(pointer[index]) { index += 1 }
    var last = count
    while last > index, Byte.isSpace(pointer[last - 1]) { last -= 1 }
    guard index < last else { return nil }
    var negative = false
    if pointer[index] == Byte.dash || pointer[index] == 0x2B {
        negative = pointer[index] == Byte.dash
        index += 1
    }
    var mantissa: UInt64 = 0
    var digits = 0
    var exponent = 0
    var sawDigit = false
    while index < last, pointer[index] &- 0x30 < 10 {
        if digits < 18 {
            mantissa = mantissa * 10 + UInt64(pointer[index] &- 0x30)
            if mantissa != 0 { digits += 1 }
        } else {
            exponent += 1
        }
        sawDigit = true
        index += 1
    }
    if index < last, pointer[index] == 0x2E {
        index += 1
        while index < last, pointer[index] &- 0x30 < 10 {
            if digits < 18 {
                mantissa = mantissa * 10 + UInt64(pointer[index] &- 0x30)
                if mantissa != 0 { digits += 1 }
                exponent -= 1
            }
            sawDigit = true
            index += 1
        }
    }
    guard sawDigit else { return nil }
    if index < last, pointer[index] | 0x20 == 0x65 {
        index += 1
        var exponentNegative = false
        if index < last, pointer[index] == Byte.dash || pointer[index] == 0x2B {
            exponentNegative = pointer[index] == Byte.dash
            index += 1
        }
        var value = 0
        var sawExponentDigit = false
        while index < last, pointer[index] &- 0x30 < 10 {
            value = min(value * 10 + Int(pointer[index] &- 0x30), 10_000)
            sawExponentDigit = true
            index += 1
        }
        guard sawExponentDigit else { return nil }
        exponent += exponentNegative ? -value : value
    }
    guard index == last else { return nil }
    var result = Double(mantissa)
    if exponent != 0 {
        if (-22...22).contains(exponent) {
            result = exponent > 0 ? result * decimalPowers[exponent] : result / decimalPowers[-exponent]
        } else {
            result *= pow(10, Double(exponent))
        }
    }
    return negative ? -result : result
}

extension String {
    func replacingNewlines() -> String {
        String(unicodeScalars.map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : Character($0) })
    }
}

/// The `Record` attributes the scanner reads (values point into the buffer, or into decoded copies).
private struct RecordAttributes {
    var type: AttributeValue?
    var unit: AttributeValue?
    var value: AttributeValue?
    var startDate: AttributeValue?
    var endDate: AttributeValue?
    var source: AttributeValue?
}
