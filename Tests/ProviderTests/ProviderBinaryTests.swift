import ContextHost
import ContextHostTestSupport
import Foundation
import Testing

/// The binary inspector and compatibility checks of issue 27 (Sources/ContextHost/Binary/),
/// on the real bundled libraries, a static-stdlib library compiled here, and copies patched to
/// fail each check.
@Suite("Provider binaries")
struct ProviderBinaryTests {
    let host = HostRuntime.current

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ctxh-binary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs a tool found on PATH; fails the test with its output when it exits non-zero.
    static func run(_ tool: String, _ arguments: [String], in folder: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(tool) \(arguments.joined(separator: " ")) failed: \(text)")
    }

    /// The bytes of a bundled library.
    static func bytes(of product: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: BuildProducts.library(product))))
    }

    /// `bytes` with every occurrence of `old` replaced by `new` (same length); fails when none.
    static func patched(_ bytes: [UInt8], _ old: String, _ new: String) throws -> [UInt8] {
        let result = BytePatch.replacingAll(old, with: new, in: bytes)
        try #require(result.count > 0, "'\(old)' not found")
        return result.bytes
    }

    /// Writes `bytes` to a temporary file and answers its path.
    static func write(_ bytes: [UInt8], name: String) throws -> String {
        let path = try temporaryFolder().appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("HostRuntime.current: this machine, the Swift 6.3.1-era version, glibc and the mapped runtime")
    func hostRuntime() throws {
        #expect(host.platform == .linuxX86_64)
        let swift = try #require(host.swiftVersion)
        #expect(swift.split(separator: ".").count == 3)
        #expect(host.glibcVersion?.hasPrefix("2.") == true)
        let runtime = try #require(host.swiftRuntimeDirectory)
        #expect(FileManager.default.fileExists(atPath: runtime + "/libswiftCore.so"))
        #expect(host.swiftToolchain?.count == 40)
    }

    @Test("libNoteProvider.so: linux-x86_64, swift-dynamic with the host's version, the entry point, no problems")
    func noteProvider() throws {
        let path = BuildProducts.library("NoteProvider")
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.platform == .linuxX86_64)
        #expect(binary.runtime == .swiftDynamic(swiftVersion: try #require(host.swiftVersion)))
        #expect(binary.runtime.kind == "swift-dynamic")
        #expect(binary.exportsEntryPoint)
        #expect(binary.neededLibraries.contains("libswiftCore.so"))
        #expect(binary.runPaths.contains("$ORIGIN"))
        #expect(binary.requiredGlibc != nil)
        #expect(binary.swiftToolchain == host.swiftToolchain)
        #expect(binary.problems(on: host, libraryPath: path) == [])
        #expect(binary.runtimeProblem(declared: binary.runtime, name: "libNoteProvider.so") == nil)
        #expect(binary.runtimeProblem(declared: .native, name: "libNoteProvider.so")?.code == .runtimeMismatch)
    }

    @Test("libDeviceInfoProvider.so (plain C): native, the entry point, no problems")
    func deviceInfoProvider() throws {
        let path = BuildProducts.library("DeviceInfoProvider")
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.platform == .linuxX86_64)
        #expect(binary.runtime == .native)
        #expect(binary.exportsEntryPoint)
        #expect(binary.requiredGlibc == "2.25")  // getentropy
        #expect(binary.problems(on: host, libraryPath: path) == [])
        #expect(binary.runtimeProblem(declared: .swiftStatic, name: "x")?.code == .runtimeMismatch)
    }

    @Test("a library built with -static-stdlib: swift-static, no problems")
    func staticStdlib() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try """
            @_cdecl("context_provider_entry_v1")
            public func entry() -> UnsafeRawPointer? { nil }
            public struct Marker: CustomStringConvertible { public var description: String { "marker" } }
            """.write(to: folder.appendingPathComponent("entry.swift"), atomically: true, encoding: .utf8)
        try Self.run("swiftc", ["-emit-library", "-static-stdlib", "entry.swift", "-o", "libstatic.so"], in: folder)
        let path = folder.appendingPathComponent("libstatic.so").path
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.runtime == .swiftStatic)
        #expect(binary.runtime.kind == "swift-static")
        #expect(!binary.neededLibraries.contains { $0.hasPrefix("libswiftCore") })
        #expect(binary.exportsEntryPoint)
        #expect(binary.problems(on: host, libraryPath: path) == [])
    }

    @Test("e_machine patched to aarch64 (183): platformMismatch")
    func platformMismatch() throws {
        var bytes = try Self.bytes(of: "DeviceInfoProvider")
        bytes[18] = 183
        bytes[19] = 0
        let path = try Self.write(bytes, name: "libarm.so")
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.platform == .linuxAarch64)
        let problems = binary.problems(on: host, libraryPath: path)
        #expect(problems.map(\.code) == [.platformMismatch])
        #expect(problems.first?.message.contains("linux-aarch64") == true)
        #expect(problems.first?.message.contains("linux-x86_64") == true)
    }

    @Test("the DWARF producer's Swift version patched to another: swiftVersionMismatch")
    func swiftVersionMismatch() throws {
        let version = try #require(host.swiftVersion)
        // Same length, another version: the last digit changed.
        let last = try #require(version.last?.wholeNumberValue)
        let other = String(version.dropLast()) + String((last + 1) % 10)
        let bytes = try Self.patched(try Self.bytes(of: "NoteProvider"), "Swift version \(version)", "Swift version \(other)")
        let path = try Self.write(bytes, name: "libNoteOther.so")
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.runtime == .swiftDynamic(swiftVersion: other))
        let problems = binary.problems(on: host, libraryPath: path)
        #expect(problems.map(\.code) == [.swiftVersionMismatch])
        #expect(problems.first?.message.contains(other) == true)
        #expect(problems.first?.fix.contains("-static-stdlib") == true)
        #expect(binary.runtimeProblem(declared: .swiftDynamic(swiftVersion: version), name: "libNoteOther.so")?.code == .runtimeMismatch)
    }

    @Test("a swift-dynamic library without a recorded version: the toolchain commit decides")
    func unknownVersion() {
        let binary = ProviderBinary(
            platform: .linuxX86_64, runtime: .swiftDynamic(swiftVersion: ProviderBinary.unknownSwiftVersion), swiftToolchain: "abc1234")
        let same = HostRuntime(platform: .linuxX86_64, swiftVersion: "6.3.1", glibcVersion: "2.36", swiftToolchain: "abc1234")
        let other = HostRuntime(platform: .linuxX86_64, swiftVersion: "6.3.1", glibcVersion: "2.36", swiftToolchain: "def5678")
        #expect(binary.problems(on: same, libraryPath: "/nonexistent/lib.so") == [])
        #expect(binary.problems(on: other, libraryPath: "/nonexistent/lib.so").map(\.code) == [.swiftVersionMismatch])
    }

    @Test("a C library whose DT_NEEDED was deleted: missingDependency naming it; $ORIGIN resolves")
    func missingDependency() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try "int ctxh_dep(void) { return 1; }\n".write(to: folder.appendingPathComponent("dep.c"), atomically: true, encoding: .utf8)
        try "int ctxh_dep(void);\nint ctxh_user(void) { return ctxh_dep(); }\n"
            .write(to: folder.appendingPathComponent("user.c"), atomically: true, encoding: .utf8)
        try Self.run("gcc", ["-shared", "-fPIC", "dep.c", "-o", "libctxh-missing-dep.so"], in: folder)
        try Self.run("gcc", ["-shared", "-fPIC", "user.c", "-L.", "-lctxh-missing-dep", "-Wl,-rpath,$ORIGIN", "-o", "libuser.so"], in: folder)
        let path = folder.appendingPathComponent("libuser.so").path
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.neededLibraries.contains("libctxh-missing-dep.so"))
        #expect(binary.runtime == .native)
        #expect(!binary.exportsEntryPoint)
        #expect(binary.problems(on: host, libraryPath: path) == [])
        try FileManager.default.removeItem(at: folder.appendingPathComponent("libctxh-missing-dep.so"))
        let problems = binary.problems(on: host, libraryPath: path)
        #expect(problems.map(\.code) == [.missingDependency])
        #expect(problems.first?.message.contains("libctxh-missing-dep.so") == true)
        // The same library installed elsewhere: $ORIGIN is the install folder, not the build folder.
        #expect(binary.problems(on: host, libraryPath: "/nonexistent/libuser.so").map(\.code) == [.missingDependency])
    }

    @Test("a GLIBC_2.25 version need patched to GLIBC_2.99: glibcTooOld")
    func glibcTooOld() throws {
        let bytes = try Self.patched(try Self.bytes(of: "DeviceInfoProvider"), "GLIBC_2.25\0", "GLIBC_2.99\0")
        let path = try Self.write(bytes, name: "libnewglibc.so")
        let binary = try ProviderBinary.inspect(file: path)
        #expect(binary.requiredGlibc == "2.99")
        let problems = binary.problems(on: host, libraryPath: path)
        #expect(problems.map(\.code) == [.glibcTooOld])
        #expect(problems.first?.message.contains("GLIBC_2.99") == true)
        // Numeric comparison: 2.9 is older than 2.25.
        let old = HostRuntime(platform: .linuxX86_64, swiftVersion: host.swiftVersion, glibcVersion: "2.9", swiftRuntimeDirectory: host.swiftRuntimeDirectory)
        let unpatched = try ProviderBinary.inspect(file: BuildProducts.library("DeviceInfoProvider"))
        #expect(unpatched.problems(on: old, libraryPath: BuildProducts.library("DeviceInfoProvider")).map(\.code) == [.glibcTooOld])
        let new = HostRuntime(platform: .linuxX86_64, swiftVersion: host.swiftVersion, glibcVersion: "2.100", swiftRuntimeDirectory: host.swiftRuntimeDirectory)
        #expect(binary.problems(on: new, libraryPath: path) == [])
    }

    @Test("garbage, truncated, 32-bit, big-endian, ET_EXEC, ET_REL and out-of-range offsets: binaryInvalid naming the file")
    func invalid() throws {
        let good = try Self.bytes(of: "DeviceInfoProvider")
        // The good library with one header field changed: (label, bytes, value).
        let corruptions: [(String, Range<Int>, UInt8)] = [
            ("32-bit", 4..<5, 1),  // EI_CLASS
            ("big-endian", 5..<6, 2),  // EI_DATA
            ("ET_EXEC", 16..<17, 2),  // e_type
            ("ET_REL", 16..<17, 1),
            ("other machine", 18..<19, 3),  // e_machine: EM_386
            ("section headers out of range", 40..<48, 0xFF),  // e_shoff
            ("program headers out of range", 32..<40, 0x7F),  // e_phoff
        ]
        let cases: [(String, [UInt8])] =
            [
                ("empty", []),
                ("garbage", Array("this is not a library at all, just text".utf8)),
                ("truncated header", Array(good.prefix(40))),
                ("truncated file", Array(good.prefix(4096))),
            ] + corruptions.map { label, range, value in (label, BytePatch.setting(range, to: value, in: good)) }
            + [("fat Mach-O", [0xCA, 0xFE, 0xBA, 0xBE] + [UInt8](repeating: 0, count: 60))]
        for (label, input) in cases {
            do {
                _ = try ProviderBinary.inspect(bytes: input, name: "lib\(label).so")
                Issue.record("\(label): accepted")
            } catch {
                #expect(error.code == .binaryInvalid, "\(label)")
                #expect(error.message.contains("lib\(label).so"), "\(label): \(error.message)")
            }
        }
    }

    @Test("a thin 64-bit Mach-O dylib: its platform and LC_LOAD_DYLIB names")
    func machO() throws {
        // mach_header_64 (arm64, MH_DYLIB, 1 command) + LC_LOAD_DYLIB of libswiftCore.
        let name = Array("/usr/lib/swift/libswiftCore.dylib\0".utf8)
        let commandSize = (24 + name.count + 7) / 8 * 8
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var bytes = le32(0xFEED_FACF) + le32(0x0100_000C) + le32(0) + le32(6) + le32(1) + le32(UInt32(commandSize)) + le32(0) + le32(0)
        bytes += le32(0xC) + le32(UInt32(commandSize)) + le32(24) + le32(0) + le32(0) + le32(0) + name
        bytes += [UInt8](repeating: 0, count: 32 + commandSize - bytes.count)
        let binary = try ProviderBinary.inspect(bytes: bytes, name: "libx.dylib")
        #expect(binary.platform == .macosArm64)
        #expect(binary.neededLibraries == ["/usr/lib/swift/libswiftCore.dylib"])
        #expect(binary.runtime.kind == "swift-dynamic")
        #expect(binary.problems(on: host, libraryPath: "/tmp/libx.dylib").map(\.code) == [.platformMismatch])
    }

    @Test("a file over 512 MB is refused without being read")
    func tooLarge() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("libhuge.so").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(ProviderBinary.maxFileSize) + 1)  // sparse
        try handle.close()
        #expect(throws: PackageError.self) { try ProviderBinary.inspect(file: path) }
        do { _ = try ProviderBinary.inspect(file: path) } catch { #expect(error.code == .binaryInvalid) }
    }

    @Test("manifest runtime values parse; PlatformID.current is this machine")
    func runtimeValues() {
        #expect(ProviderRuntime(kind: "native", swiftVersion: nil) == .native)
        #expect(ProviderRuntime(kind: "swift-static", swiftVersion: nil) == .swiftStatic)
        #expect(ProviderRuntime(kind: "swift-dynamic", swiftVersion: "6.3.1") == .swiftDynamic(swiftVersion: "6.3.1"))
        #expect(ProviderRuntime(kind: "swift-dynamic", swiftVersion: nil) == nil)
        #expect(ProviderRuntime(kind: "rust", swiftVersion: nil) == nil)
        #expect(PlatformID.current == .linuxX86_64)
        #expect(PlatformID.allCases.sorted().map(\.rawValue) == ["linux-aarch64", "linux-x86_64", "macos-arm64", "macos-x86_64"])
        // 6.3 and 6.3.0 are the same version.
        let binary = ProviderBinary(platform: .linuxX86_64, runtime: .swiftDynamic(swiftVersion: "6.3"))
        #expect(binary.runtimeProblem(declared: .swiftDynamic(swiftVersion: "6.3.0"), name: "x") == nil)
    }
}
