#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a provider library is, read from its bytes: platform, Swift runtime, dependencies.
/// `inspect` treats every byte as hostile: bounded reads, checked arithmetic, bounded work.
package struct ProviderBinary: Sendable, Equatable {
    /// The platform the library is built for (ELF e_machine/class/data, or Mach-O cputype).
    package var platform: PlatformID
    /// How it gets its Swift runtime (see `ProviderBinary.detectRuntime`).
    package var runtime: ProviderRuntime
    /// DT_NEEDED (ELF) or LC_LOAD_DYLIB (Mach-O) names, in order.
    package var neededLibraries: [String]
    /// DT_RUNPATH / DT_RPATH (ELF) or LC_RPATH (Mach-O) folders, split on `:`, unexpanded.
    package var runPaths: [String]
    /// The highest `GLIBC_x.y[.z]` the library needs (`.gnu.version_r`), e.g. "2.34"; `nil` if none.
    package var requiredGlibc: String?
    /// Whether the dynamic symbol table defines `entrySymbol`.
    package var exportsEntryPoint: Bool
    /// The swiftlang llvm-project commit of the toolchain that linked it (from `.comment`, put
    /// there by the toolchain's `swiftrt.o`), or `nil`; identifies the toolchain when no Swift
    /// version is recorded.
    package var swiftToolchain: String?

    /// The provider entry symbol of ABI version 1 (`CTXP_ENTRY_SYMBOL_V1` in context_provider.h).
    package static let entrySymbol = "context_provider_entry_v1"
    /// The version of a `swift-dynamic` library that records none (no DWARF producer).
    package static let unknownSwiftVersion = "unknown"
    /// The largest file `inspect(file:)` reads.
    package static let maxFileSize: Int = 512 << 20
    /// How far into one section the Swift version is searched for.
    static let maxVersionScan = 64 << 20

    /// Creates a description (tests and Mach-O).
    package init(
        platform: PlatformID, runtime: ProviderRuntime, neededLibraries: [String] = [], runPaths: [String] = [],
        requiredGlibc: String? = nil, exportsEntryPoint: Bool = false, swiftToolchain: String? = nil
    ) {
        self.platform = platform
        self.runtime = runtime
        self.neededLibraries = neededLibraries
        self.runPaths = runPaths
        self.requiredGlibc = requiredGlibc
        self.exportsEntryPoint = exportsEntryPoint
        self.swiftToolchain = swiftToolchain
    }

    /// Reads the library at `path` (refusing files over `maxFileSize`) and inspects it.
    package static func inspect(file path: String) throws(PackageError) -> ProviderBinary {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let bytes = try readFile(path, name: name)
        return try inspect(bytes: bytes, name: name)
    }

    /// Inspects a library's bytes; throws `binaryInvalid` naming `name` and the defect.
    package static func inspect(bytes: [UInt8], name: String) throws(PackageError) -> ProviderBinary {
        if bytes.count >= 4 {
            let magic = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
            if [0xCFFA_EDFE, 0xCEFA_EDFE, 0xCAFE_BABE, 0xCAFE_BABF, 0xFEED_FACF, 0xFEED_FACE].contains(magic) {
                return try MachOImage.inspect(bytes: bytes, name: name)
            }
        }
        let image = try ELFImage(bytes: bytes, name: name)
        let platform: PlatformID
        switch image.machine {
        case 62: platform = .linuxX86_64
        case 183: platform = .linuxAarch64
        default:
            throw PackageError(
                .binaryInvalid, "'\(name)' is built for ELF machine \(image.machine), which no supported platform uses (x86_64 is 62, aarch64 is 183).",
                fix: "Package a library built for one of: \(PlatformID.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let dynamic = try image.dynamic()

        var requiredGlibc: String?
        for need in image.versionNeeds() where need.hasPrefix("GLIBC_") {
            let version = String(need.dropFirst(6))
            guard DottedVersion.parse(version) != nil else { continue }  // GLIBC_PRIVATE and the like
            if let current = requiredGlibc, DottedVersion.compare(version, current) != .orderedDescending { continue }
            requiredGlibc = version
        }

        // Symbols: the entry point, and whether Swift runtime entry points are imported.
        let entry = Array((entrySymbol + "\0").utf8)
        let swiftPrefixes: [[UInt8]] = [Array("$s".utf8), Array("_$s".utf8), Array("swift_".utf8), Array("_swift_".utf8)]
        // What `swiftrt.o` imports in every library the Swift toolchain links, even plain C.
        let registration: [[UInt8]] = [Array("swift_addNewDSOImage\0".utf8), Array("_swift_backtrace_isThunkFunction\0".utf8)]
        var exportsEntryPoint = false
        var importsSwift = false
        var definesSwift = false
        image.forEachDynamicSymbol { offset, strings, defined in
            if defined, !exportsEntryPoint, image.reader.hasPrefix(entry, at: offset, in: strings) { exportsEntryPoint = true }
            if swiftPrefixes.contains(where: { image.reader.hasPrefix($0, at: offset, in: strings) }),
                !registration.contains(where: { image.reader.hasPrefix($0, at: offset, in: strings) })
            {
                if defined { definesSwift = true } else { importsSwift = true }
            }
            return true
        }

        let hasSwiftMetadata = image.sections.contains { $0.name.hasPrefix("swift5_") && $0.size > 0 && $0.type != 8 }
        let swiftVersion = recordedSwiftVersion(image)
        let needsSwiftCore = dynamic.needed.contains { $0.hasPrefix("libswiftCore.") }
        let runtime: ProviderRuntime
        if needsSwiftCore, importsSwift || definesSwift || hasSwiftMetadata || swiftVersion != nil {
            runtime = .swiftDynamic(swiftVersion: swiftVersion ?? unknownSwiftVersion)
        } else if !needsSwiftCore, hasSwiftMetadata || swiftVersion != nil {
            runtime = .swiftStatic
        } else {
            runtime = .native
        }
        return ProviderBinary(
            platform: platform, runtime: runtime, neededLibraries: dynamic.needed, runPaths: dynamic.runPaths,
            requiredGlibc: requiredGlibc, exportsEntryPoint: exportsEntryPoint, swiftToolchain: toolchain(image))
    }

    /// The Swift compiler version in the DWARF producer (`DW_AT_producer` "Swift version 6.3.1
    /// (swift-6.3.1-RELEASE)"), the only place a Swift library records it; `nil` without debug info.
    static func recordedSwiftVersion(_ image: ELFImage) -> String? {
        let marker = Array("Swift version ".utf8)
        for sectionName in [".debug_str", ".debug_line_str", ".debug_info", ".comment"] {
            // Skip compressed sections (SHF_COMPRESSED).
            guard let section = image.sections.first(where: { $0.name == sectionName && $0.flags & 0x800 == 0 }),
                let bounds = image.bounds(of: section),
                let found = image.reader.firstIndex(of: marker, in: bounds, limit: maxVersionScan)
            else { continue }
            var end = found + marker.count
            let start = end
            while end < bounds.upperBound, end - start < 32 {
                let byte = image.reader.bytes[end]
                let allowed = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x2D || byte == 0x5F
                guard allowed else { break }
                end += 1
            }
            guard end > start, let first = image.reader.u8(start), first >= 0x30, first <= 0x39 else { continue }
            return String(decoding: image.reader.bytes[start..<end], as: UTF8.self)
        }
        return nil
    }

    /// The swiftlang llvm-project commit in `.comment` ("clang version … (https://github.com/
    /// swiftlang/llvm-project.git <commit>)"), or `nil`.
    static func toolchain(_ image: ELFImage) -> String? {
        let marker = Array("swiftlang/llvm-project.git ".utf8)
        guard let section = image.sections.first(where: { $0.name == ".comment" }), let bounds = image.bounds(of: section),
            let found = image.reader.firstIndex(of: marker, in: bounds, limit: 1 << 20)
        else { return nil }
        let start = found + marker.count
        var end = start
        while end < bounds.upperBound, end - start < 64 {
            let byte = image.reader.bytes[end]
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { break }
            end += 1
        }
        return end - start >= 7 ? String(decoding: image.reader.bytes[start..<end], as: UTF8.self) : nil
    }

    /// The whole file, refusing more than `maxFileSize` bytes.
    static func readFile(_ path: String, name: String) throws(PackageError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw PackageError(.storeIO, "Cannot read '\(path)': \(reason).", fix: "Check that the file exists and is readable.")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw PackageError(.binaryInvalid, "'\(name)' is not a regular file.", fix: "Point at the library file itself.")
        }
        guard info.st_size >= 0, info.st_size <= maxFileSize else {
            throw PackageError(
                .binaryInvalid, "'\(name)' is \(info.st_size) bytes, over the \(maxFileSize >> 20) MB limit for a provider library.",
                fix: "Strip debug information (`strip --strip-debug`) or split the provider.")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            done += count
        }
        if done < bytes.count { bytes.removeSubrange(done...) }
        return bytes
    }
}
