import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

@testable import ContextHost

/// The registry cache (`ManifestCache`, `ManifestCatalog.discover(_:cacheFile:)`): what a cached
/// discovery returns must be exactly what parsing returns, whatever happened to the files or the
/// cache file in between.
@Suite("Registry cache")
struct RegistryCacheTests {
    /// A folder of manifests that exercise every part of a `Manifest` and of a rejection.
    private func makeFolder() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(
            writing: "m/a-full.yaml",
            """
            # yaml-language-server: $schema=../docs/manifest.schema.json
            manifestVersion: 1
            id: com.example.full
            title: { en: Full, de: Voll, pt-BR: Cheio }
            description: { en: Every field., de: Jedes Feld. }
            iconName: note.text
            version: 1.2.3-beta.2+build.7
            library: libNoteProvider.so
            sha256: \(String(repeating: "ab", count: 32))
            priority: -3
            maximumAttachmentCount: 4
            usesContainerPanel: true
            collection: both
            isolation: process
            availability:
              platforms: [linux]
              host: ">=0.1.0 <1.0.0"
              permissions: [network, files]
            settings:
              folder: { type: path, default: "~/notes", description: "Where notes are" }
              limit: { type: integer, default: 10 }
              ratio: { type: number, default: 0.25 }
              verbose: { type: bool, default: false }
              token: { type: string, required: true }
            timeouts: { collect: 1.5s, preview: 250ms, detail: 2s, encode: 1m }

            """)
        try directory.write("m/b-plain.yaml", TestManifest.yaml(id: "com.example.plain", library: "libFixtureProviders.so"))
        try directory.write("m/c-duplicate.yaml", TestManifest.yaml(id: "com.example.plain", library: "libOther.so"))
        try directory.write("m/d-broken.yml", "manifestVersion: 1\nid: [not, an, id\n")
        try directory.write(
            "m/e-invalid.yaml",
            TestManifest.yaml(id: "com.example.invalid", library: "x.so", permissions: "[teleport]", priority: 1)
                + "\ncolour: blue\n")
        try directory.write("m/notes.txt", "not a manifest")
        return directory
    }

    private func paths(_ directory: TemporaryDirectory, _ folders: [String] = ["m"]) -> [ManifestSearchPath] {
        folders.map {
            ManifestSearchPath(path: directory.path + "/" + $0, displayPath: $0, source: .commandLine)
        }
    }

    private func cacheFile(_ directory: TemporaryDirectory) -> String { directory.path + "/cache/registry.cache" }

    @Test("enough manifests to be read side by side give the catalog reading them one by one gives, in order; so does the cache over them")
    func parallelLoading() throws {
        let directory = try makeFolder()
        // Enough files for the parallel path, with rejections and duplicate ids spread through them
        // (a duplicate's first file must win whichever thread read it).
        for index in 0..<(3 * ManifestCatalog.parallelLoadMinimum) {
            let name = String(format: "m/f%03d.yaml", index)
            switch index % 7 {
            case 0: try directory.write(name, "manifestVersion: 1\nid: [broken\n")
            case 3: try directory.write(name, TestManifest.yaml(id: "com.example.shared", library: "lib\(index).so"))
            default: try directory.write(name, TestManifest.yaml(id: "com.example.p\(index)", library: "lib\(index).so"))
            }
        }
        // (Four cores asked for, so the chunks are read side by side on any machine; and the
        // default, whatever this machine has.)
        let found = ManifestCatalog.findFiles(paths(directory))
        let parallel = ManifestCatalog.catalog(found, outcomes: ManifestCatalog.loadResults(found.files, cores: 4))
        let oneByOne = ManifestCatalog.catalog(found, outcomes: found.files.map(ManifestCatalog.loadResult))
        #expect(parallel == oneByOne)
        #expect(ManifestCatalog.discover(paths(directory)) == oneByOne)
        #expect(parallel.entries.count == 5 + 3 * ManifestCatalog.parallelLoadMinimum)
        let duplicates = parallel.entries.filter { entry in
            if case .rejected(let rejection) = entry { return rejection.diagnostics.contains { $0.code == .duplicateId } }
            return false
        }
        let shared = (0..<(3 * ManifestCatalog.parallelLoadMinimum)).filter { $0 % 7 == 3 }.count
        #expect(duplicates.count == 1 + (shared - 1))  // c-duplicate.yaml, and every shared id but the first
        // Cached: first parsed (side by side) and saved, then reused; the same catalog each time.
        let (first, firstReport) = ManifestCatalog.discover(paths(directory), cacheFile: cacheFile(directory), racyWindowNanoseconds: 0)
        #expect(first == oneByOne)
        #expect(firstReport.parsed == oneByOne.entries.count)
        // The cache read back before the folders are listed, and while they are (what a cache of
        // `ManifestCache.sideBySideDecodeMinimum` bytes or more gets).
        for sideBySideDecodeMinimum in [Int.max, 0] {
            let (again, report) = ManifestCatalog.discover(
                paths(directory), cacheFile: cacheFile(directory), racyWindowNanoseconds: 0,
                sideBySideDecodeMinimum: sideBySideDecodeMinimum)
            #expect(again == oneByOne)
            #expect(report == CachedDiscoveryReport(reused: oneByOne.entries.count), "decoded side by side: \(sideBySideDecodeMinimum == 0)")
        }
        // An edit seen while the cache is decoded side by side: that file alone is parsed again.
        try directory.write("m/f001.yaml", TestManifest.yaml(id: "com.example.edited", library: "libedited.so"))
        let (edited, editedReport) = ManifestCatalog.discover(
            paths(directory), cacheFile: cacheFile(directory), racyWindowNanoseconds: 0, sideBySideDecodeMinimum: 0)
        #expect(editedReport.parsed == 1 && editedReport.reused == oneByOne.entries.count - 1 && editedReport.written)
        #expect(edited.manifest(id: "com.example.edited") != nil && edited.manifest(id: "com.example.p1") == nil)
        #expect(edited == ManifestCatalog.discover(paths(directory)))
    }

    /// Cached discovery that caches even files written a moment ago.
    private func cached(_ directory: TemporaryDirectory, _ folders: [String] = ["m"]) -> (ManifestCatalog, CachedDiscoveryReport) {
        let (catalog, report) = ManifestCatalog.discover(
            paths(directory, folders), cacheFile: cacheFile(directory), racyWindowNanoseconds: 0)
        return (catalog, report)
    }

    /// Rewrites a file in place (same inode) and sets its modification time.
    private func rewrite(_ path: String, _ text: String, modified seconds: Int) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
        setModified(path, seconds: seconds)
    }

    private func setModified(_ path: String, seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test("a cache hit gives the same manifests and diagnostics as parsing, without reading YAML")
    func hitEqualsColdParse() throws {
        let directory = try makeFolder()
        let cold = ManifestCatalog.discover(paths(directory))
        #expect(cold.manifests.count == 2)
        #expect(cold.rejections.count == 3)

        let (first, firstReport) = cached(directory)
        #expect(first == cold)
        #expect(firstReport == CachedDiscoveryReport(reused: 0, parsed: 5, written: true))

        let (second, secondReport) = cached(directory)
        #expect(second == cold)
        #expect(secondReport == CachedDiscoveryReport(reused: 5, parsed: 0, written: false))
        let full = try #require(second.manifest(id: "com.example.full"))
        #expect(full.version.description == "1.2.3-beta.2+build.7")
        #expect(full.settings.map(\.defaultValue) == [.string("~/notes"), .number(10), .number(0.25), .bool(false), nil])
        #expect(full.timeouts.collect == .milliseconds(1500))
        #expect(full.schemaReference == "../docs/manifest.schema.json")
        #expect(full.summary?.resolve(locale: "de") == "Jedes Feld.")
        #expect(try #require(second.manifest(id: "com.example.plain")).summary == nil)

    }

    @Test("an edited manifest is parsed again: same size with a new mtime, another size, same mtime restored")
    func editsAreReparsed() throws {
        let directory = try makeFolder()
        let file = directory.path + "/m/b-plain.yaml"
        setModified(file, seconds: 1_700_000_000)
        _ = cached(directory)

        // Same size, new modification time.
        let original = try String(contentsOfFile: file, encoding: .utf8)
        let sameSize = original.replacingOccurrences(of: "priority: 10", with: "priority: 42")
        #expect(sameSize.utf8.count == original.utf8.count)
        try rewrite(file, sameSize, modified: 1_700_000_100)
        var (catalog, report) = cached(directory)
        #expect(report.parsed == 1)
        #expect(report.reused == 4)
        #expect(report.written)
        #expect(catalog.manifest(id: "com.example.plain")?.priority == 42)
        #expect(catalog == ManifestCatalog.discover(paths(directory)))

        // Another size.
        try rewrite(file, sameSize + "\nusesContainerPanel: true\n", modified: 1_700_000_200)
        (catalog, report) = cached(directory)
        #expect(report.parsed == 1)
        #expect(catalog.manifest(id: "com.example.plain")?.usesContainerPanel == true)

        // Same size and the old modification time put back (as `cp -p` or `touch -d` can): the
        // status-change time still tells.
        let sneaky = (sameSize + "\nusesContainerPanel: true\n").replacingOccurrences(of: "priority: 42", with: "priority: 77")
        try rewrite(file, sneaky, modified: 1_700_000_200)
        (catalog, report) = cached(directory)
        #expect(report.parsed == 1)
        #expect(catalog.manifest(id: "com.example.plain")?.priority == 77)

        // Replaced by another file (an editor's write-and-rename).
        try directory.write("m/b-plain.yaml", TestManifest.yaml(id: "com.example.plain", library: "libFixtureProviders.so", priority: 5))
        (catalog, report) = cached(directory)
        #expect(report.parsed == 1)
        #expect(catalog.manifest(id: "com.example.plain")?.priority == 5)
        #expect(catalog == ManifestCatalog.discover(paths(directory)))
    }

    @Test("any difference in the stamp or the naming misses")
    func stampFields() {
        let stamp = FileStamp(size: 10, modifiedNanoseconds: 20, changedNanoseconds: 30, inode: 40, device: 50)
        let manifest = try! Manifest.parse(TestManifest.yaml(id: "com.example.a", library: "a.so"), file: "m/a.yaml", directory: "/x/m")
        let cache = ManifestCache(
            folders: ["/x/m"],
            entries: ["/x/m/a.yaml": .init(absolutePath: "/x/m/a.yaml", file: "m/a.yaml", directory: "/x/m", stamp: stamp, result: .success(manifest))])
        // Each look-up takes the entry out of (a copy of) the cache, hit or miss.
        func take(_ path: String = "/x/m/a.yaml", file: String = "m/a.yaml", stamp: FileStamp = stamp) -> Result<Manifest, ManifestRejection>? {
            var copy = cache
            defer { #expect(copy.entries[path] == nil) }
            return copy.takeResult(absolutePath: path, file: file, directory: "/x/m", stamp: stamp)
        }
        #expect(take() == .success(manifest))
        var changed = [stamp, stamp, stamp, stamp, stamp]
        changed[0].size += 1
        changed[1].modifiedNanoseconds += 1
        changed[2].changedNanoseconds += 1
        changed[3].inode += 1
        changed[4].device += 1
        for other in changed {
            #expect(take(stamp: other) == nil)
        }
        #expect(take(file: "./m/a.yaml") == nil)
        #expect(take("/x/m/b.yaml") == nil)
        #expect(cache.entries.count == 1, "the cache itself untouched")
    }

    @Test("deleted files leave the cache, added ones join it, and duplicate ids follow the files")
    func addedAndDeleted() throws {
        let directory = try makeFolder()
        _ = cached(directory)

        // Deleting the first of two manifests with one id makes the second one accepted.
        try FileManager.default.removeItem(atPath: directory.path + "/m/b-plain.yaml")
        var (catalog, report) = cached(directory)
        #expect(report == CachedDiscoveryReport(reused: 4, parsed: 0, written: true))
        #expect(catalog.manifest(id: "com.example.plain")?.library == "libOther.so")
        #expect(catalog == ManifestCatalog.discover(paths(directory)))
        var cache = try #require(Self.loaded(cacheFile(directory), folders: paths(directory).map(\.path)))
        #expect(cache.entries.count == 4)
        #expect(cache.entries[directory.path + "/m/b-plain.yaml"] == nil)

        try directory.write("m/f-new.yaml", TestManifest.yaml(id: "com.example.new", library: "n.so"))
        (catalog, report) = cached(directory)
        #expect(report == CachedDiscoveryReport(reused: 4, parsed: 1, written: true))
        #expect(catalog.manifest(id: "com.example.new") != nil)
        cache = try #require(Self.loaded(cacheFile(directory), folders: paths(directory).map(\.path)))
        #expect(cache.entries.count == 5)

        // Nothing changed: the file is not rewritten.
        let before = try FileManager.default.attributesOfItem(atPath: cacheFile(directory))[.modificationDate] as? Date
        (_, report) = cached(directory)
        #expect(report == CachedDiscoveryReport(reused: 5, parsed: 0, written: false))
        let after = try FileManager.default.attributesOfItem(atPath: cacheFile(directory))[.modificationDate] as? Date
        #expect(before == after)
    }

    private static func loaded(_ path: String, folders: [String]) -> ManifestCache? {
        if case .loaded(let cache) = ManifestCache.read(path: path, folders: folders) { return cache }
        return nil
    }

    @Test(
        "a corrupt, truncated, old, foreign or shared cache is ignored with its reason and rebuilt",
        arguments: [
            ("flipped byte", "checksum does not match"),
            ("truncated", "truncated"),
            ("empty", "not a registry cache"),
            ("garbage", "not a registry cache"),
            ("old format", "format version 0"),
            ("other folders", "made for other manifest folders"),
            ("group-writable", "not private to this user"),
            ("directory", "not a regular file"),
        ])
    func unusableCache(damage: String, reason: String) throws {
        let directory = try makeFolder()
        try directory.write("other/x.yaml", TestManifest.yaml(id: "com.example.x", library: "x.so"))
        let cold = ManifestCatalog.discover(paths(directory))
        _ = cached(directory)
        let file = cacheFile(directory)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        switch damage {
        case "flipped byte": bytes[bytes.count / 2] ^= 0x20
        case "truncated": bytes.removeLast(bytes.count / 3)
        case "empty": bytes = []
        case "garbage": bytes = Array("{\"this is\": \"json\"}".utf8)
        case "old format": bytes[8] = 0
        case "other folders":
            _ = ManifestCatalog.discover(paths(directory, ["other"]), cacheFile: file + ".other", racyWindowNanoseconds: 0)
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file + ".other")))
        default: break
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        if damage == "group-writable" { chmod(file, 0o664) }
        if damage == "directory" {
            try FileManager.default.removeItem(atPath: file)
            try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        }

        let (catalog, report) = cached(directory)
        #expect(catalog == cold)
        #expect(report.parsed == 5)
        #expect(report.reused == 0)
        let ignored = try #require(report.ignoredCache)
        #expect(ignored.contains(reason), "\(ignored)")
        if damage == "directory" {
            #expect(report.writeError != nil)  // cannot rename over a folder: reported, not fatal
        } else {
            #expect(report.written)
            let (again, againReport) = cached(directory)
            #expect(again == cold)
            #expect(againReport == CachedDiscoveryReport(reused: 5, parsed: 0, written: false))
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test("every truncation of a cache file is refused, never misread")
    func everyTruncation() throws {
        let directory = try makeFolder()
        _ = cached(directory)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: cacheFile(directory))))
        let folders = paths(directory).map(\.path)
        for length in 0..<bytes.count {
            #expect(throws: CacheFormatError.self) { try ManifestCache.decode(Array(bytes[..<length]), folders: folders) }
        }
        #expect(try ManifestCache.decode(bytes, folders: folders).entries.count == 5)
    }

    @Test("a file changed within the racy window is parsed but not cached")
    func racyFilesAreNotCached() throws {
        let directory = try makeFolder()
        let hour: Int64 = 3600 * 1_000_000_000  // "recent" = the last hour, so the test cannot be slow enough to miss
        let (_, report) = ManifestCatalog.discover(paths(directory), cacheFile: cacheFile(directory), racyWindowNanoseconds: hour)
        #expect(report.parsed == 5)
        let (_, again) = ManifestCatalog.discover(paths(directory), cacheFile: cacheFile(directory), racyWindowNanoseconds: hour)
        #expect(again.parsed == 5)
        #expect(again.reused == 0)
    }

    @Test("the cache is per set of folders, and off without a cache folder")
    func configuration() {
        let a = ManifestCache.fileName(folders: ["/a", "/b"])
        #expect(a.hasPrefix("registry-") && a.hasSuffix(".cache") && a.count == "registry-".count + 16 + ".cache".count)
        #expect(a != ManifestCache.fileName(folders: ["/b", "/a"]))
        #expect(a != ManifestCache.fileName(folders: ["/a/b"]))
        var configuration = HostConfiguration(manifestDirectories: ["/a", "/b"])
        #expect(configuration.registryCacheFile() == nil)
        configuration.registryCacheDirectory = "/tmp/c"
        #expect(configuration.registryCacheFile() == "/tmp/c/" + a)
    }

    @Test("file names sort by their UTF-8 bytes, as comparing the utf8 views does")
    func namesSortByBytes() {
        let names = [
            "a.yaml", "B.yaml", "b.yaml", "a", "", "ab.yaml", "a.yml", "é.yaml", "e\u{301}.yaml", "z.yaml", "Ω.yaml",
            "10.yaml", "9.yaml", "a.yaml.yaml", "😀.yaml", "\u{7F}.yaml",
        ]
        for first in names {
            for second in names {
                #expect(
                    ManifestCatalog.precedesByBytes(first, second) == first.utf8.lexicographicallyPrecedes(second.utf8),
                    "\(first) < \(second)")
            }
        }
    }

    @Test("numbers in the cache, one byte and longer, read back as written")
    func cacheNumbers() throws {
        var encoder = CacheEncoder()
        let values: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 1 << 35, .max]
        for value in values { encoder.varint(value) }
        let bytes = encoder.bytes
        let read = try bytes.withUnsafeBytes { raw throws(CacheFormatError) -> [UInt64] in
            var decoder = CacheDecoder(raw)
            var read: [UInt64] = []
            for _ in values { read.append(try decoder.varint()) }
            #expect(decoder.isAtEnd)
            // Cut off inside a long number: an error, not a wrong value.
            var cut = CacheDecoder(UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 1)]))
            for _ in values.dropLast() { _ = try cut.varint() }
            #expect(throws: CacheFormatError.self) { _ = try cut.varint() }
            return read
        }
        #expect(read == values)
    }
}
