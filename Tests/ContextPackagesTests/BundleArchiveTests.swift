import ContextHost
import ContextPackages
import ContextHostTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `.ctxp` archive layer (`BundleArchive`) and the bundle index (`BundleIndex`) against round
/// trips and hostile archives written by a real tar writer (Python's `tarfile`,
/// Tests/Fixtures/bundles/make-hostile.py).
@Suite("Bundle archive and index")
struct BundleArchiveTests {
    /// The hostile archives, made once per test run.
    static let hostile: String = {
        let directory = NSTemporaryDirectory() + "ctxp-hostile-\(getpid())"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", BuildProducts.packageRoot + "/Tests/Fixtures/bundles/make-hostile.py", directory]
        try? process.run()
        process.waitUntilExit()
        return directory
    }()

    /// One hostile archive's bytes.
    private func fixture(_ name: String) throws -> [UInt8] {
        let path = Self.hostile + "/" + name
        try #require(FileManager.default.fileExists(atPath: path), "make-hostile.py did not write \(name)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Reads `name` and answers the error (failing the test if it was accepted).
    private func refusal(_ name: String, limits: ArchiveLimits = .init()) throws -> PackageError? {
        let bytes = try fixture(name)
        return packageRefusal(name) { () throws(PackageError) in try BundleArchive.read(bytes, limits: limits).map(\.path) }
    }

    // MARK: Round trips

    @Test("write then read gives the same entries: executable bit, a 10 MB file, a path needing the ustar prefix or pax")
    func roundTrip() throws {
        var big = [UInt8](repeating: 0, count: 10_000_000)
        var seed: UInt64 = 27
        for index in big.indices where index % 7 == 0 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1
            big[index] = UInt8(truncatingIfNeeded: seed >> 33)
        }
        let prefixed = "data/" + String(repeating: "d", count: 60) + "/" + String(repeating: "f", count: 80) + ".txt"
        let unsplittable = "data/" + String(repeating: "n", count: 150) + ".txt"  // a 154-byte last component: pax
        let entries = [
            ArchiveEntry(path: "ctxp-bundle.json", bytes: Array("{}".utf8)),
            ArchiveEntry(path: "lib/linux-x86_64/libWeather.so", bytes: [0x7F, 0x45, 0x4C, 0x46], executable: true),
            ArchiveEntry(path: "data/big.bin", bytes: big),
            ArchiveEntry(path: prefixed, bytes: Array("prefix".utf8)),
            ArchiveEntry(path: unsplittable, bytes: Array("pax".utf8)),
            ArchiveEntry(path: "data/empty", bytes: []),
            ArchiveEntry(path: "data/caf\u{E9}.txt", bytes: Array(repeating: 0x41, count: 512)),
        ]
        let archive = try BundleArchive.write(entries)
        #expect(archive.count < big.count)
        #expect(try BundleArchive.read(archive) == entries)
        // Deterministic: the same entries make the same bytes.
        #expect(try BundleArchive.write(entries) == archive)
        // GNU tar reads it too.
        let directory = try TemporaryDirectory()
        let path = directory.path + "/x.ctxp"
        try Data(archive).write(to: URL(fileURLWithPath: path))
        #expect(try BundleArchive.read(file: path) == entries)
        let listing = try run("/usr/bin/env", ["tar", "tzvf", path])
        #expect(listing.contains(prefixed) && listing.contains(unsplittable) && listing.contains("-rwxr-xr-x"), "\(listing)")
    }

    /// Runs a command and answers its standard output.
    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }

    @Test("write refuses what read would refuse")
    func writeRefuses() {
        let cases: [([ArchiveEntry], PackageErrorCode)] = [
            ([ArchiveEntry(path: "../x", bytes: [])], .archiveUnsafePath),
            ([ArchiveEntry(path: "/x", bytes: [])], .archiveUnsafePath),
            ([ArchiveEntry(path: "a//x", bytes: [])], .archiveUnsafePath),
            ([ArchiveEntry(path: String(repeating: "x", count: 201), bytes: [])], .archiveUnsafePath),
            ([ArchiveEntry(path: "a", bytes: []), ArchiveEntry(path: "a", bytes: [])], .archiveDuplicateEntry),
            ([ArchiveEntry(path: "a", bytes: []), ArchiveEntry(path: "a/b", bytes: [])], .archiveDuplicateEntry),
            ((0..<1025).map { ArchiveEntry(path: "f\($0)", bytes: []) }, .archiveTooLarge),
        ]
        for (entries, code) in cases {
            #expect(throws: PackageError.self) { try BundleArchive.write(entries) }
            do {
                _ = try BundleArchive.write(entries)
            } catch {
                #expect(error.code == code, "\(entries.prefix(2).map(\.path)): \(error)")
            }
        }
    }

    @Test("an archive made by Python's tarfile reads, directory entries checked and dropped")
    func pythonArchive() throws {
        let entries = try BundleArchive.read(try fixture("valid.ctxp"))
        #expect(entries.map(\.path) == ["lib/linux-x86_64/libX.so", "ctxp-bundle.json"])
        #expect(entries.map(\.executable) == [true, false])
        let long = "data/" + String(repeating: "d", count: 60) + "/" + String(repeating: "f", count: 80) + ".txt"
        for name in ["pax-path.ctxp", "gnu-longname.ctxp", "ustar-prefix.ctxp"] {
            let read = try BundleArchive.read(try fixture(name))
            #expect(read.count >= 2 && read[1].path == long && read[1].bytes == Array("long".utf8), "\(name)")
        }
        #expect(try BundleArchive.read(try fixture("pax-path.ctxp")).last?.path == "data/caf\u{E9}.txt")
    }

    @Test("archives made by GNU tar (gnu, posix/pax and ustar formats, long names, directories) read", arguments: ["gnu", "posix", "ustar"])
    func gnuTar(_ format: String) throws {
        let directory = try TemporaryDirectory()
        let long = "data/" + String(repeating: "d", count: 60) + "/" + String(repeating: "f", count: 80) + ".txt"
        let files = ["ctxp-bundle.json": "{}", "lib/linux-x86_64/libX.so": "ELF", long: "long"]
        for (path, text) in files { _ = try directory.write("src/" + path, text) }
        chmod(directory.path + "/src/lib/linux-x86_64/libX.so", 0o755)
        let archive = directory.path + "/x.ctxp"
        _ = try run("/usr/bin/env", ["tar", "--format=\(format)", "-czf", archive, "-C", directory.path + "/src", "ctxp-bundle.json", "lib", "data"])
        let entries = try BundleArchive.read(file: archive)
        #expect(Dictionary(uniqueKeysWithValues: entries.map { ($0.path, String(decoding: $0.bytes, as: UTF8.self)) }) == files)
        #expect(entries.first { $0.path.hasSuffix(".so") }?.executable == true)
    }

    // MARK: Hostile archives

    @Test(
        "hostile archives are refused with the right code, naming the entry",
        arguments: [
            ("symlink.ctxp", PackageErrorCode.archiveLink, ["lib/evil.so", "/etc/passwd", "symbolic"]),
            ("hardlink.ctxp", .archiveLink, ["copy.json", "ctxp-bundle.json", "hard link"]),
            ("chardev.ctxp", .archiveSpecialFile, ["dev/null", "character device"]),
            ("blockdev.ctxp", .archiveSpecialFile, ["dev/sda", "block device"]),
            ("fifo.ctxp", .archiveSpecialFile, ["pipe", "FIFO"]),
            ("global-header.ctxp", .archiveSpecialFile, ["global"]),
            ("dotdot.ctxp", .archiveUnsafePath, ["'../x'", "'..'"]),
            ("absolute.ctxp", .archiveUnsafePath, ["'/etc/x'", "absolute"]),
            ("nested-dotdot.ctxp", .archiveUnsafePath, ["'a/../../x'", "'..'"]),
            ("dot.ctxp", .archiveUnsafePath, ["'./x'", "'.'"]),
            ("empty-component.ctxp", .archiveUnsafePath, ["'a//x'", "empty component"]),
            ("backslash.ctxp", .archiveUnsafePath, ["a\\x", "backslash"]),
            ("too-deep.ctxp", .archiveUnsafePath, ["a/b/c/d/e/f/g/h/x", "9 components"]),
            ("too-long.ctxp", .archiveUnsafePath, ["data/xxxx", "255 bytes"]),
            ("non-utf8.ctxp", .archiveUnsafePath, ["caf\\xe9.txt", "UTF-8"]),
            ("duplicate.ctxp", .archiveDuplicateEntry, ["'a.txt'", "same path"]),
            ("case-duplicate.ctxp", .archiveDuplicateEntry, ["'a.txt'", "'A.txt'"]),
            ("file-dir-clash.ctxp", .archiveDuplicateEntry, ["'lib'"]),
            ("file-parent-clash.ctxp", .archiveDuplicateEntry, ["'lib/x.so'", "'lib' is a file"]),
            ("huge-size-gnu.ctxp", .archiveTooLarge, ["data/huge.bin", "1099511627776 bytes"]),
            ("huge-size-pax.ctxp", .archiveTooLarge, ["data/huge.bin", "1099511627776 bytes"]),
            ("big-file.ctxp", .archiveTooLarge, ["data/zeros.bin", "134217729 bytes"]),
            ("many-entries.ctxp", .archiveTooLarge, ["1024 entries", "f1024"]),
            ("truncated.ctxp", .archiveCorrupt, ["truncated", "data/random.bin"]),
            ("flipped.ctxp", .archiveCorrupt, ["damaged", "data/random.bin"]),
            ("bad-crc.ctxp", .archiveCorrupt, ["damaged", "data/random.bin"]),
            ("trailing-garbage.ctxp", .archiveCorrupt, ["follow the gzip stream", "data/random.bin"]),
            ("two-members.ctxp", .archiveCorrupt, ["second gzip member", "data/random.bin"]),
            ("plain-tar.ctxp", .archiveCorrupt, ["not gzip"]),
            ("not-tar.ctxp", .archiveCorrupt, ["checksum"]),
            ("bad-checksum.ctxp", .archiveCorrupt, ["checksum", "before the first entry"]),
            ("no-end-marker.ctxp", .archiveCorrupt, ["end-of-archive", "ctxp-bundle.json"]),
        ] as [(String, PackageErrorCode, [String])])
    func hostile(_ name: String, _ code: PackageErrorCode, _ mentions: [String]) throws {
        guard let error = try refusal(name) else { return }
        #expect(error.code == code, "\(name): \(error)")
        for text in mentions { #expect(error.message.contains(text), "\(name): \(error)") }
        #expect(!error.fix.isEmpty)
    }

    @Test("a gzip bomb (300 MB of zeros in 300 KB) stops at the cap without holding what it inflated")
    func gzipBomb() throws {
        let bytes = try fixture("bomb.ctxp")
        #expect(bytes.count < 1_000_000)
        var before = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &before)
        let clock = ContinuousClock()
        let start = clock.now
        var limits = ArchiveLimits()
        limits.expandedBytes = 16 << 20
        for limits in [limits, ArchiveLimits()] {
            do {
                _ = try BundleArchive.read(bytes, limits: limits)
                Issue.record("the bomb was accepted")
            } catch {
                #expect(error.code == .archiveTooLarge, "\(error)")
                #expect(error.message.contains("inflates to more than \(limits.streamBytesForTests)"), "\(error)")
            }
        }
        var after = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &after)
        // ru_maxrss is in KiB: the peak grew by far less than the 264 MB inflated.
        #expect(after.ru_maxrss - before.ru_maxrss < 128 * 1024, "peak RSS grew by \(after.ru_maxrss - before.ru_maxrss) KiB")
        #expect(clock.now - start < .seconds(20))
    }

    @Test("the expanded-size cap counts every file, the file cap one file")
    func sizeCaps() throws {
        let entries = (0..<4).map { ArchiveEntry(path: "f\($0)", bytes: [UInt8](repeating: 1, count: 1000)) }
        let archive = try BundleArchive.write(entries)
        var limits = ArchiveLimits()
        limits.expandedBytes = 3500
        #expect(throws: PackageError.self) { try BundleArchive.read(archive, limits: limits) }
        do { _ = try BundleArchive.read(archive, limits: limits) } catch {
            #expect(error.code == .archiveTooLarge && error.message.contains("'f3'"), "\(error)")
        }
        limits = ArchiveLimits()
        limits.fileBytes = 999
        do { _ = try BundleArchive.read(archive, limits: limits) } catch {
            #expect(error.code == .archiveTooLarge && error.message.contains("'f0'"), "\(error)")
        }
        limits = ArchiveLimits()
        limits.compressedBytes = archive.count - 1
        do { _ = try BundleArchive.read(archive, limits: limits) } catch { #expect(error.code == .archiveTooLarge, "\(error)") }
        limits.entries = 3
        limits.compressedBytes = archive.count
        do { _ = try BundleArchive.read(archive, limits: limits) } catch {
            #expect(error.code == .archiveTooLarge && error.message.contains("'f3'"), "\(error)")
        }
        #expect(try BundleArchive.read(archive).count == 4)
    }

    @Test("read(file:) refuses a file over the compressed cap before reading it, and names the path on I/O errors")
    func readFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/big.ctxp"
        try Data(try fixture("random.ctxp")).write(to: URL(fileURLWithPath: path))
        var limits = ArchiveLimits()
        limits.compressedBytes = 1000
        do { _ = try BundleArchive.read(file: path, limits: limits) } catch {
            #expect(error.code == .archiveTooLarge && error.message.hasPrefix(path), "\(error)")
        }
        do { _ = try BundleArchive.read(file: directory.path + "/missing.ctxp") } catch {
            #expect(error.code == .storeIO && error.message.contains("missing.ctxp"), "\(error)")
        }
        do { _ = try BundleArchive.read(file: directory.path) } catch { #expect(error.code == .storeIO, "\(error)") }
        let truncated = directory.path + "/t.ctxp"
        try Data(try fixture("truncated.ctxp")).write(to: URL(fileURLWithPath: truncated))
        do { _ = try BundleArchive.read(file: truncated) } catch {
            #expect(error.code == .archiveCorrupt && error.message.hasPrefix(truncated), "\(error)")
        }
    }

    // MARK: The index

    private let entries = [
        ArchiveEntry(path: "lib/linux-x86_64/libWeather.so", bytes: [0x7F, 0x45, 0x4C, 0x46], executable: true),
        ArchiveEntry(path: "context-provider.yaml", bytes: Array("id: com.example.weather\n".utf8)),
        ArchiveEntry(path: "LICENSE", bytes: Array("MIT".utf8)),
        ArchiveEntry(path: BundleIndex.fileName, bytes: Array("{}".utf8)),
        ArchiveEntry(path: BundleIndex.signatureFileName, bytes: Array("sig".utf8)),
    ]

    @Test("the index describes the files (sorted, without itself) and round-trips through its canonical JSON")
    func indexRoundTrip() throws {
        let index = BundleIndex.describing(id: "com.example.weather", version: "1.2.0-beta.1", entries: entries)
        #expect(index.format == 1)
        #expect(index.files.map(\.path) == ["LICENSE", "context-provider.yaml", "lib/linux-x86_64/libWeather.so"])
        #expect(index.files[0].size == 3)
        #expect(index.files[0].sha256 == SHA256.hex(of: Array("MIT".utf8)))
        let bytes = index.encoded()
        #expect(try BundleIndex.decode(bytes) == index)
        #expect(try BundleIndex.decode(bytes).encoded() == bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\"format\":1,\"id\":\"com.example.weather\",\"version\":\"1.2.0-beta.1\",\"files\":[\n{\"path\":\"LICENSE\""))
        try index.verify(entries)
        // An empty bundle index round-trips too.
        let empty = BundleIndex(id: "com.example.empty", version: "1.0.0", files: [])
        #expect(try BundleIndex.decode(empty.encoded()) == empty)
    }

    @Test("verify finds a changed byte, a missing file and an extra file")
    func indexVerify() throws {
        let index = BundleIndex.describing(id: "com.example.weather", version: "1.2.0", entries: entries)
        var flipped = entries
        flipped[1].bytes[0] ^= 0x01
        do { try index.verify(flipped); Issue.record("accepted a changed file") } catch {
            #expect(error.code == .indexMismatch, "\(error)")
            #expect(error.message.contains("context-provider.yaml") && error.message.contains(index.files[1].sha256), "\(error)")
            #expect(error.message.contains(SHA256.hex(of: flipped[1].bytes)), "\(error)")
        }
        var shorter = entries
        shorter[2].bytes.removeLast()
        do { try index.verify(shorter); Issue.record("accepted a shorter file") } catch {
            #expect(error.code == .indexMismatch && error.message.contains("LICENSE") && error.message.contains("3 bytes"), "\(error)")
        }
        do { try index.verify(entries.filter { $0.path != "LICENSE" }); Issue.record("accepted a missing file") } catch {
            #expect(error.code == .indexMissingFile && error.message.contains("LICENSE"), "\(error)")
        }
        do { try index.verify(entries + [ArchiveEntry(path: "extra.txt", bytes: [])]); Issue.record("accepted an extra file") } catch {
            #expect(error.code == .indexExtraFile && error.message.contains("extra.txt"), "\(error)")
        }
        // Without the index and signature entries, the rest still verifies.
        try index.verify(entries.filter { !$0.path.hasPrefix("ctxp-bundle") })
    }

    @Test(
        "decode refuses invalid indexes",
        arguments: [
            (#"{"format":2,"id":"com.a.b","version":"1.0.0","files":[]}"#, PackageErrorCode.indexUnsupportedFormat, "format 1"),
            (#"{"format":"1","id":"com.a.b","version":"1.0.0","files":[]}"#, .indexInvalid, "'format'"),
            (#"{"id":"com.a.b","version":"1.0.0","files":[]}"#, .indexInvalid, "'format'"),
            (#"{"format":1,"version":"1.0.0","files":[]}"#, .indexInvalid, "'id'"),
            (#"{"format":1,"id":"Not An Id","version":"1.0.0","files":[]}"#, .indexInvalid, "reverse-DNS"),
            (#"{"format":1,"id":"com.a.b","version":"1.0","files":[]}"#, .indexInvalid, "semantic version"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0"}"#, .indexInvalid, "'files'"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[],"extra":1}"#, .indexInvalid, "'extra'"),
            (#"[1]"#, .indexInvalid, "not an object"),
            (#"{"format":1,"#, .indexInvalid, "not valid JSON"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":-1,"sha256":"\#(String(repeating: "0", count: 64))"}]}"#, .indexInvalid, "'a'"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":1.5,"sha256":"\#(String(repeating: "0", count: 64))"}]}"#, .indexInvalid, "'size'"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":1,"sha256":"\#(String(repeating: "A", count: 64))"}]}"#, .indexInvalid, "sha256"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":1,"sha256":"abc"}]}"#, .indexInvalid, "sha256"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"../a","size":1,"sha256":"\#(String(repeating: "0", count: 64))"}]}"#, .indexInvalid, "'../a'"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"ctxp-bundle.json","size":1,"sha256":"\#(String(repeating: "0", count: 64))"}]}"#, .indexInvalid, "names the index"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":1,"sha256":"\#(String(repeating: "0", count: 64))"},{"path":"a","size":1,"sha256":"\#(String(repeating: "0", count: 64))"}]}"#, .indexInvalid, "twice"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"b","size":1,"sha256":"\#(String(repeating: "0", count: 64))"},{"path":"a","size":1,"sha256":"\#(String(repeating: "0", count: 64))"}]}"#, .indexInvalid, "out of order"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":1}]}"#, .indexInvalid, "sha256"),
            (#"{"format":1,"id":"com.a.b","version":"1.0.0","files":[{"path":"a","size":1,"sha256":"\#(String(repeating: "0", count: 64))","mode":1}]}"#, .indexInvalid, "'mode'"),
        ] as [(String, PackageErrorCode, String)])
    func indexRefusals(_ json: String, _ code: PackageErrorCode, _ mention: String) {
        do {
            let index = try BundleIndex.decode(Array(json.utf8))
            Issue.record("accepted \(json): \(index)")
        } catch {
            #expect(error.code == code, "\(json): \(error)")
            #expect(error.message.contains(mention), "\(json): \(error)")
        }
    }

    @Test("the fuzz seed bundle (Python-made, with directories) verifies against its own index")
    func seedBundleVerifies() throws {
        let path = BuildProducts.packageRoot + "/Fuzz/corpus/bundle/gzip-valid.ctxp"
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)).dropFirst())  // the mode byte
        let entries = try BundleArchive.read(bytes)
        let indexBytes = try #require(entries.first { $0.path == BundleIndex.fileName }?.bytes)
        let index = try BundleIndex.decode(indexBytes)
        #expect(index.encoded() == indexBytes)
        try index.verify(entries)
        #expect(index == BundleIndex.describing(id: "com.example.weather", version: "1.0.0", entries: entries))
    }

    @Test("decode refuses an index over 1 MiB before parsing it")
    func indexTooLarge() {
        let bytes = Array("{\"format\":1}".utf8) + [UInt8](repeating: 0x20, count: 1 << 20)
        #expect(throws: PackageError.self) { try BundleIndex.decode(bytes) }
    }
}

extension ArchiveLimits {
    /// The inflated-stream cap the reader applies (files + 4 KiB per entry + 1 MiB).
    fileprivate var streamBytesForTests: Int { expandedBytes + entries * 4096 + (1 << 20) }
}
