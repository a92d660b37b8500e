import ProviderSupport

/// The on-disk cache of a data file's per-day aggregates, keyed by the file's path, size and
/// modification time, so a second open reads a few kilobytes instead of the whole export.
///
/// Format (little-endian): magic `HMCACHE2`, the data file's canonical path, size and
/// modification time, the ingest report, then per metric its days as
/// `(day Int32, value, min, max Float64, count UInt32)`.
struct AggregateCache {
    static let magic = Array("HMCACHE2".utf8)

    /// The cache folder.
    let directory: String

    /// The cache file of a data file.
    func cachePath(for dataPath: String) -> String {
        let bytes = Array(dataPath.utf8)
        let hash = bytes.withUnsafeBufferPointer { fnv1a($0.baseAddress!, $0.count) }
        var hex = String(hash, radix: 16)
        while hex.count < 16 { hex = "0" + hex }
        return directory + "/" + FileIO.baseName(dataPath) + "-" + hex + ".aggregates"
    }

    /// The cached aggregates, or `nil` when there is no cache or it belongs to another version
    /// of the file.
    func load(dataPath: String, stamp: FileStamp) -> HealthData? {
        // At most 64 MiB - 1 byte, as before; a cache that is not a regular file is not read.
        guard let bytes = FileIO.read(cachePath(for: dataPath), limit: (1 << 26) - 1) else { return nil }
        var reader = ByteReader(bytes: bytes)
        guard reader.bytes(Self.magic.count) == Self.magic, reader.string() == dataPath,
            reader.u64() == stamp.size, reader.i64() == stamp.modifiedSeconds, reader.i64() == stamp.modifiedNanoseconds
        else { return nil }
        var report = IngestReport()
        guard let format = reader.string(), let bytesRead = reader.u64(), let records = reader.u64(),
            let used = reader.u64(), let malformed = reader.u64(), let workouts = reader.u64(),
            let summaries = reader.u64(), let hasTruncation = reader.u8()
        else { return nil }
        report.format = format
        report.bytes = bytesRead
        report.records = records
        report.used = used
        report.malformed = malformed
        report.workouts = workouts
        report.activitySummaries = summaries
        if hasTruncation == 1 {
            guard let truncation = reader.string() else { return nil }
            report.truncation = truncation
        }
        guard let problemCount = reader.u32(), problemCount <= 10_000 else { return nil }
        for _ in 0..<problemCount {
            guard let problem = reader.string() else { return nil }
            report.problems.append(problem)
        }
        guard let unknownCount = reader.u32(), unknownCount <= 100_000 else { return nil }
        for _ in 0..<unknownCount {
            guard let name = reader.string(), let count = reader.u64() else { return nil }
            report.unknownTypes[name] = count
        }
        guard let metricCount = reader.u8() else { return nil }
        var days: [Metric: [DayValue]] = [:]
        for _ in 0..<metricCount {
            guard let raw = reader.u8(), let metric = Metric(rawValue: raw), let dayCount = reader.u32(),
                Int(dayCount) * 32 <= reader.remaining
            else { return nil }
            var list: [DayValue] = []
            list.reserveCapacity(Int(dayCount))
            for _ in 0..<dayCount {
                guard let day = reader.u32(), let value = reader.f64(), let low = reader.f64(), let high = reader.f64(),
                    let count = reader.u32(), value.isFinite, low.isFinite, high.isFinite,
                    list.last.map({ $0.day < Int32(bitPattern: day) }) ?? true
                else { return nil }
                list.append(DayValue(day: Int32(bitPattern: day), value: value, min: low, max: high, count: count))
            }
            days[metric] = list
        }
        guard reader.remaining == 0 else { return nil }
        return HealthData(days: days, report: report)
    }

    /// Writes the cache; answers a problem description when it could not.
    @discardableResult
    func store(_ data: HealthData, dataPath: String, stamp: FileStamp) -> String? {
        guard FileSystem.makeDirectories(directory) else {
            return "cannot create the cache folder \(directory): \(FileSystem.errorText())"
        }
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: Self.magic)
        writer.string(dataPath)
        writer.u64(stamp.size)
        writer.i64(stamp.modifiedSeconds)
        writer.i64(stamp.modifiedNanoseconds)
        let report = data.report
        writer.string(report.format)
        for value in [report.bytes, report.records, report.used, report.malformed, report.workouts, report.activitySummaries] {
            writer.u64(value)
        }
        if let truncation = report.truncation {
            writer.u8(1)
            writer.string(truncation)
        } else {
            writer.u8(0)
        }
        writer.u32(UInt32(truncatingIfNeeded: report.problems.count))
        for problem in report.problems { writer.string(problem) }
        writer.u32(UInt32(truncatingIfNeeded: report.unknownTypes.count))
        for (name, count) in report.unknownTypes.sorted(by: { $0.key < $1.key }) {
            writer.string(name)
            writer.u64(count)
        }
        let metrics = data.days.keys.sorted { $0.rawValue < $1.rawValue }
        writer.u8(UInt8(truncatingIfNeeded: metrics.count))
        for metric in metrics {
            let list = data.days[metric] ?? []
            writer.u8(metric.rawValue)
            writer.u32(UInt32(truncatingIfNeeded: list.count))
            for day in list {
                writer.u32(UInt32(bitPattern: day.day))
                writer.f64(day.value)
                writer.f64(day.min)
                writer.f64(day.max)
                writer.u32(day.count)
            }
        }
        return FileSystem.writeAtomically(writer.bytes, to: cachePath(for: dataPath))
    }
}

/// Appends little-endian values.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        u32(UInt32(truncatingIfNeeded: utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Reads little-endian values; every read answers `nil` past the end.
struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    var remaining: Int { bytes.count - offset }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count <= remaining else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u32() -> UInt32? { littleEndian() }
    mutating func u64() -> UInt64? { littleEndian() }

    /// The next `T.bitWidth / 8` bytes as a little-endian `T`.
    private mutating func littleEndian<T: FixedWidthInteger & UnsignedInteger>() -> T? {
        let size = T.bitWidth / 8
        guard remaining >= size else { return nil }
        var value: T = 0
        for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
        offset += size
        return value
    }

    mutating func i64() -> Int64? { u64().map { Int64(bitPattern: $0) } }
    mutating func f64() -> Double? { u64().map { Double(bitPattern: $0) } }

    mutating func string() -> String? {
        guard let count = u32(), Int(count) <= remaining else { return nil }
        defer { offset += Int(count) }
        return String(decoding: bytes[offset..<(offset + Int(count))], as: UTF8.self)
    }
}
