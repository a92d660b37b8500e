import ContextHost
import ContextPackages
import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The pieces of packages that need no built provider: the manifest's `libraries` and
/// `runtime`, the lock file, the packaged manifest rewrite, installed-provider discovery, and
/// the documentation of every error code (docs/packages.md).
@Suite("Packages: lock, manifest fields, discovery")
struct PackageStoreTests {
    static let header = """
        manifestVersion: 1
        id: com.example.weather
        title: Weather
        iconName: cloud
        version: 1.2.0

        """

    private func parse(_ body: String) throws(ManifestRejection) -> Manifest {
        try Manifest.parse(Self.header + body, file: "weather.yaml", directory: "/tmp")
    }

    private func codes(_ body: String) -> [String] {
        do {
            _ = try parse(body)
            return []
        } catch {
            return error.diagnostics.map(\.code.rawValue)
        }
    }

    @Test("libraries per platform and runtime parse; this platform's library is the one loaded")
    func manifestFields() throws {
        let manifest = try parse("""
            libraries:
              linux-x86_64: lib/linux-x86_64/libWeather.so
              linux-aarch64: lib/linux-aarch64/libWeather.so
              macos-arm64: lib/macos-arm64/libWeather.dylib
            runtime: swift-dynamic
            swiftVersion: "6.3.1"
            """)
        #expect(manifest.libraries.map(\.platform) == ["linux-x86_64", "linux-aarch64", "macos-arm64"])
        #expect(manifest.library == manifest.libraries.first { $0.platform == PlatformID.current?.rawValue }?.path)
        #expect(manifest.runtime == .swiftDynamic(swiftVersion: "6.3.1"))
        #expect(try parse("library: libWeather.so\nruntime: swift-static\n").runtime == .swiftStatic)
        #expect(try parse("library: libWeather.so\n").runtime == nil)
    }

    @Test("bad libraries and runtime fields are positioned errors with their codes")
    func manifestFieldErrors() {
        #expect(codes("library: a.so\nlibraries:\n  linux-x86_64: b.so\n") == ["invalid-value"])
        #expect(codes("libraries:\n  linux-sparc: b.so\n").contains("invalid-value"))
        #expect(codes("libraries:\n  linux-x86_64: b.txt\n") == ["invalid-value"])
        #expect(codes("libraries: {}\n") == ["invalid-value"])
        #expect(codes("libraries:\n  \(PlatformID.current == .macosArm64 ? "linux-x86_64" : "macos-arm64"): b.so\n") == ["no-library-for-platform"])
        #expect(codes("library: a.so\nruntime: swift-dynamic\n") == ["missing-field"])
        #expect(codes("library: a.so\nruntime: static\n") == ["invalid-value"])
        #expect(codes("library: a.so\nswiftVersion: \"6.3\"\n") == ["invalid-value"])
        #expect(codes("library: a.so\nruntime: native\nswiftVersion: \"6.3\"\n") == ["invalid-value"])
        #expect(codes("library: a.so\nruntime: swift-dynamic\nswiftVersion: six\n") == ["invalid-value"])
        #expect(codes("title2: x\n").contains("missing-field"))  // neither library nor libraries
    }

    @Test("package rewrites library, sha256, libraries and runtime, keeping everything else")
    func bundleManifestRewrite() throws {
        let original = Self.header + """
            # my comment
            library: .build/debug/libWeather.so
            sha256: \(String(repeating: "a", count: 64))
            libraries:
              linux-x86_64: old.so
            runtime: native
            priority: 5
            """
        let rewritten = Packager.bundleManifest(
            original, libraries: [PlatformLibrary(platform: "linux-x86_64", path: "lib/linux-x86_64/libWeather.so")],
            runtime: .swiftStatic)
        #expect(rewritten.contains("# my comment"))
        #expect(rewritten.contains("priority: 5"))
        #expect(!rewritten.contains("libWeather.so\nsha256") && !rewritten.contains("old.so") && !rewritten.contains("runtime: native"))
        let manifest = try Manifest.parse(rewritten, file: "x.yaml", directory: "/tmp")
        #expect(manifest.runtime == .swiftStatic)
        #expect(manifest.sha256 == nil)
        #expect(manifest.priority == 5)
    }

    private func sampleLock() -> LockFile {
        let hash = String(repeating: "ab", count: 32)
        let record = LockFile.Installed(
            version: "1.2.0", signer: "E327F5F1363801F0", signerKey: "RWTwATg28fUn47KVNorlNvLIT6QLYGIhVvINZMoAvAW23EbRqml5YXSX",
            runtime: "swift-static", indexSHA256: hash, manifestSHA256: hash,
            libraries: [.init(platform: "linux-x86_64", path: "lib/linux-x86_64/libWeather.so", sha256: hash)])
        var older = record
        older.version = "1.1.0"
        older.signer = nil
        older.signerKey = nil
        return LockFile(providers: [
            LockFile.Entry(id: "com.example.weather", current: record, previous: older),
            LockFile.Entry(id: "com.example.alpha", current: older),
        ])
    }

    @Test("the lock file round-trips, sorted by id, and reads back what it wrote")
    func lockRoundTrip() throws {
        let lock = sampleLock()
        #expect(lock.providers.map(\.id) == ["com.example.alpha", "com.example.weather"])
        let decoded = try LockFile.decode(lock.encoded(), file: "providers.lock")
        #expect(decoded == lock)
        let folder = try TemporaryDirectory()
        try lock.save(file: folder.path + "/config/providers.lock")
        #expect(try LockFile.load(file: folder.path + "/config/providers.lock") == lock)
        var info = stat()
        #expect(stat(folder.path + "/config/providers.lock", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try LockFile.load(file: folder.path + "/missing.lock").providers.isEmpty)
    }

    @Test("a damaged lock file is refused with lock-invalid, naming the problem")
    func lockRefusals() {
        let good = String(decoding: sampleLock().encoded(), as: UTF8.self)
        let cases = [
            "not json", "{\"format\": 2, \"providers\": []}", "{\"providers\": []}", "{\"format\": 1}",
            good.replacingOccurrences(of: "com.example.alpha", with: "com.example.weather"),
            good.replacingOccurrences(of: "lib/linux-x86_64/libWeather.so", with: "../../etc/passwd"),
            good.replacingOccurrences(of: String(repeating: "ab", count: 32), with: "xyz"),
            good.replacingOccurrences(of: "\"1.1.0\"", with: "\"one\""),
            "{\"format\": 1, \"providers\": [{\"id\": \"Bad Id\"}]}",
        ]
        for text in cases {
            #expect(throws: PackageError.self, "\(text.prefix(60))") { try LockFile.decode(Array(text.utf8), file: "providers.lock") }
            do {
                _ = try LockFile.decode(Array(text.utf8), file: "providers.lock")
            } catch {
                #expect(error.code == .lockInvalid)
                #expect(error.message.contains("providers.lock"))
            }
        }
    }

    @Test("installed providers: a manifest edited after install is rejected; a --manifests copy wins")
    func installedDiscovery() throws {
        let folder = try TemporaryDirectory()
        let locations = PackageLocations(configDirectory: folder.path + "/config", storeDirectory: folder.path + "/store")
        let manifestText = Self.header + "libraries:\n  \(PlatformID.current?.rawValue ?? "linux-x86_64"): lib/libWeather.so\nruntime: native\n"
        let manifestPath = try folder.write("store/com.example.weather/1.2.0/manifest.yaml", manifestText)
        let hash = SHA256.hex(of: Array(manifestText.utf8))
        let libraryHash = String(repeating: "cd", count: 32)
        let record = LockFile.Installed(
            version: "1.2.0", signer: nil, signerKey: nil, runtime: "native", indexSHA256: hash, manifestSHA256: hash,
            libraries: [.init(platform: PlatformID.current?.rawValue ?? "linux-x86_64", path: "lib/libWeather.so", sha256: libraryHash)])
        try LockFile(providers: [LockFile.Entry(id: "com.example.weather", current: record)]).save(file: locations.lockFile)

        let found = InstalledProviders.discover(locations)
        guard case .accepted(let manifest)? = found.entries.first else {
            Issue.record("not accepted: \(found)")
            return
        }
        #expect(manifest.sha256 == libraryHash, "the library is pinned to the lock's hash")
        // Through the registry cache: the same answer, the second time from the cache file.
        let cache = folder.path + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        #expect(InstalledProviders.discover(locations, cacheDirectory: cache).entries == found.entries)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache).contains { $0.hasPrefix("installed-registry-") })
        #expect(InstalledProviders.discover(locations, cacheDirectory: cache).entries == found.entries)
        #expect(manifest.directory == folder.path + "/store/com.example.weather/1.2.0")

        // A development manifest with the same id comes first.
        let development = try Manifest.parse(Self.header + "library: libWeather.so\n", file: "dev/weather.yaml", directory: "/dev")
        let merged = InstalledProviders.merge(ManifestCatalog(entries: [.accepted(development)], diagnostics: []), installed: found)
        #expect(merged.manifests.map(\.manifestPath) == ["dev/weather.yaml"])
        #expect(merged.rejections.first?.diagnostics.first?.code == .duplicateId)

        // Edited after install.
        chmod(manifestPath, 0o644)
        try (manifestText + "priority: 100\n").write(toFile: manifestPath, atomically: false, encoding: .utf8)
        guard case .rejected(let rejection)? = InstalledProviders.discover(locations).entries.first else {
            Issue.record("an edited manifest was accepted")
            return
        }
        #expect(rejection.diagnostics.first?.code.rawValue == "hash-mismatch")
    }

    @Test("every package error code is documented in docs/packages.md")
    func documented() throws {
        let missing = try BuildProducts.undocumented(PackageErrorCode.all.map(\.rawValue), in: "docs/packages.md") { "| `\($0)` |" }
        #expect(missing.isEmpty, "docs/packages.md lacks \(missing)")
    }
}

/// The SHA-256 that hashes every library and bundle: the CPU's instructions (SHA-NI) agree with
/// the portable implementation and with the FIPS 180-4 vectors on every length around the block
/// boundaries, in one call and in pieces.
@Suite("SHA-256: hardware and portable")
struct SHA256HardwareTests {
    @Test("known vectors and random data of every length up to 1,100 bytes")
    func agrees() {
        // On a CPU with SHA-NI (this CI's), the hardware path must be the one tested here.
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8), cpu.contains(" sha_ni") {
            #expect(SHA256.usesHardware)
        }
        #expect(SHA256.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(of: []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hex(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var generator = SystemRandomNumberGenerator()
        for length in 0...1100 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = SHA256.portableHash(bytes)
            #expect(SHA256.hash(bytes) == expected, "length \(length)")
            var pieces = SHA256()
            var offset = 0
            while offset < bytes.count {
                let size = min(bytes.count - offset, Int.random(in: 1...130, using: &generator))
                pieces.update(Array(bytes[offset..<(offset + size)]))
                offset += size
            }
            #expect(pieces.finalize() == expected, "length \(length) in pieces")
        }
        let big = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(SHA256.hex(of: big) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
