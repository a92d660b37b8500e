import Testing
import ProviderSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh folder under /tmp, removed by the caller.
private func temporaryFolder() -> String {
    var template = Array("/tmp/provider-support-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
    return String(cString: path!)
}

private func write(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0)
    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

@Suite("ProviderSupport: the file reader the bundled providers share")
struct FileIOTests {
    @Test("a file at the limit is read whole; one byte more is refused with its size, or cut with truncating")
    func limits() throws {
        let folder = temporaryFolder()
        defer { _ = system("rm -rf '\(folder)'") }
        write(Array(repeating: 0x41, count: 100), to: folder + "/hundred")
        #expect(try FileIO.readChecked(folder + "/hundred", limit: 100).count == 100)
        #expect(throws: FileIO.ReadError.tooLarge(size: 100, limit: 99)) { try FileIO.readChecked(folder + "/hundred", limit: 99) }
        #expect(try FileIO.readChecked(folder + "/hundred", limit: 10, truncating: true) == Array(repeating: 0x41, count: 10))
        #expect(FileIO.read(folder + "/hundred", limit: 99) == nil)
        write([], to: folder + "/empty")
        #expect(try FileIO.readChecked(folder + "/empty", limit: 0) == [])
    }

    @Test("a FIFO, a folder and a missing file are refused at once, each with its reason")
    func notRegular() throws {
        let folder = temporaryFolder()
        defer { _ = system("rm -rf '\(folder)'") }
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        // Opened non-blocking: a blocking open of a FIFO without a writer would never return.
        #expect(throws: FileIO.ReadError.notRegular) { try FileIO.readChecked(folder + "/fifo", limit: 1 << 20) }
        #expect(throws: FileIO.ReadError.notRegular) { try FileIO.readChecked(folder, limit: 1 << 20) }
        #expect(throws: FileIO.ReadError.notFound) { try FileIO.readChecked(folder + "/absent", limit: 1 << 20) }
        #expect(FileIO.ReadError.notFound.message == "file not found")
        #expect(FileIO.info(folder)?.isDirectory == true)
        #expect(FileIO.list(folder) == ["fifo"])
    }

    @Test("a /proc file that reports no size is followed to its end")
    func unsizedFile() throws {
        let bytes = try FileIO.readChecked("/proc/self/status", limit: 1 << 20)
        #expect(String(decoding: bytes.prefix(5), as: UTF8.self) == "Name:")
    }
}

/// `"3600 CET false"`: an offset's seconds, abbreviation and daylight flag.
private func parts(_ offset: ZoneOffset) -> String { "\(offset.seconds) \(offset.abbreviation) \(offset.isDaylightSaving)" }

@Suite("ProviderSupport: the zoneinfo reader Calendar and Location share")
struct ZoneInfoTests {
    /// 2025-01-15T12:00Z and 2025-07-15T12:00Z, then the same days of 2100 (past every table: the footer's rule).
    static let january2025: Int64 = 1_736_942_400, july2025: Int64 = 1_752_580_800
    static let january2100: Int64 = 4_103_697_600, july2100: Int64 = 4_119_336_000

    @Test("Europe/Zurich from the system zoneinfo: CET in winter, CEST in summer, from the table and from the footer")
    func zurich() throws {
        let zone = try ZoneInfo.load("Europe/Zurich")
        #expect(zone.version >= UInt8(ascii: "2"))
        #expect(parts(zone.offset(at: Self.january2025)) == "3600 CET false")
        #expect(parts(zone.offset(at: Self.july2025)) == "7200 CEST true")
        #expect(zone.offset(at: Self.january2100).seconds == 3600)
        #expect(parts(zone.offset(at: Self.july2100)) == "7200 CEST true")
        #expect(zone.offset(at: Self.july2025).label == "UTC+02:00")
    }

    @Test("southern hemisphere rules: daylight time across the new year")
    func sydney() throws {
        let rule = try #require(PosixTZ("AEST-10AEDT,M10.1.0,M4.1.0/3"))
        #expect(rule.offsetSeconds(at: Self.january2100) == 39600)
        #expect(rule.offsetSeconds(at: Self.july2100) == 36000)
        #expect(try ZoneInfo.load("Australia/Sydney").offset(at: Self.january2025).seconds == 39600)
    }

    @Test("POSIX rules: numeric names, no daylight rules, and refusals without overflow")
    func posixRules() {
        #expect(PosixTZ("<+0530>-5:30").map { parts($0.offset(at: 0)) } == "19800 +0530 false")
        // A daylight name without rules: standard time only (the POSIX default US rules are obsolete).
        #expect(PosixTZ("EST5EDT")?.offsetSeconds(at: Self.july2025) == -18000)
        // More digits than an hour, minute or day can have is refused, not multiplied into an overflow.
        #expect(PosixTZ("EST99999999999999999999") == nil)
        #expect(PosixTZ("CET-1CEST,M3.5.0,M10.5.0/99999999999999999999") == nil)
        #expect(PosixTZ("CET-1CEST,M13.5.0,M10.5.0/3") == nil)
        #expect(PosixTZ("CET-1CEST,M3.5.0,M10.5.0/3 trailing") == nil)
        // Instants far outside any calendar are read as standard time instead of overflowing.
        #expect(PosixTZ("CET-1CEST,M3.5.0,M10.5.0/3")?.offsetSeconds(at: .max) == 3600)
        #expect(PosixTZ("CET-1CEST,M3.5.0,M10.5.0/3")?.offsetSeconds(at: .min) == 3600)
    }

    @Test("names that leave the zoneinfo folder, and bytes that are not TZif, are refused with a reason")
    func refusals() {
        #expect(throws: ZoneInfo.Failure.self) { try ZoneInfo.load("../../etc/passwd") }
        #expect(throws: ZoneInfo.Failure.self) { try ZoneInfo.load("/etc/passwd") }
        #expect(ZoneInfo.path(of: "../etc/passwd") == nil)
        #expect(ZoneInfo.path(of: "Europe/Zurich") != nil)
        do {
            _ = try TZifFile(bytes: Array("TZif2 but far too short".utf8), name: "Bad/Zone")
            Issue.record("short bytes were read as TZif")
        } catch {
            #expect(error.message == "zone file for Bad/Zone is not valid TZif: bad magic")
        }
    }
}
