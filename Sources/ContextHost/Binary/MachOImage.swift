/// The little a Mach-O dylib tells the inspector: platform (cputype), LC_LOAD_DYLIB names and
/// LC_RPATH folders. Universal (fat), 32-bit and big-endian files are refused.
enum MachOImage {
    /// The most load commands read.
    static let maxCommands = 4096

    /// Inspects a thin 64-bit little-endian Mach-O dylib or bundle.
    static func inspect(bytes: [UInt8], name: String) throws(PackageError) -> ProviderBinary {
        let reader = ByteReader(bytes: bytes)
        func invalid(_ what: String, fix: String = "Package one thin 64-bit .dylib per platform (`lipo -thin <arch>`).") -> PackageError {
            PackageError(.binaryInvalid, "'\(name)' is not a valid shared library: \(what).", fix: fix)
        }
        guard let magic = reader.u32(0) else { throw invalid("truncated Mach-O header") }
        switch magic {
        case 0xFEED_FACF: break
        case 0xBEBA_FECA, 0xBFBA_FECA: throw invalid("a universal (fat) Mach-O binary")
        case 0xFEED_FACE: throw invalid("a 32-bit Mach-O binary")
        default: throw invalid("a big-endian Mach-O binary")
        }
        guard let cpuType = reader.u32(4), let fileType = reader.u32(12), let commandCount = reader.u32(16), let commandsSize = reader.u32(20),
            bytes.count >= 32
        else { throw invalid("truncated Mach-O header") }
        let platform: PlatformID
        switch cpuType {
        case 0x0100_0007: platform = .macosX86_64
        case 0x0100_000C: platform = .macosArm64
        default: throw invalid("Mach-O CPU type \(cpuType), neither x86_64 nor arm64", fix: "Package a library built for x86_64 or arm64.")
        }
        // MH_DYLIB (6) or MH_BUNDLE (8).
        guard fileType == 6 || fileType == 8 else { throw invalid("Mach-O file type \(fileType), not a dylib (MH_DYLIB) or bundle (MH_BUNDLE)", fix: "Link the provider with `-dynamiclib`.") }
        guard commandCount <= UInt32(maxCommands), let commands = reader.range(32, UInt64(commandsSize)) else {
            throw invalid("load commands (\(commandCount), \(commandsSize) bytes) are outside the file")
        }
        var needed: [String] = []
        var runPaths: [String] = []
        var offset = 0
        for _ in 0..<Int(commandCount) {
            let at = commands.lowerBound + offset
            guard commands.count - offset >= 8, let command = reader.u32(at), let size = reader.u32(at + 4), size >= 8,
                UInt64(size) <= UInt64(commands.count - offset)
            else { throw invalid("a load command runs past the load-command area") }
            let body = at..<(at + Int(size))
            // LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LOAD_UPWARD_DYLIB; LC_RPATH.
            if [0xC, 0x8000_0018, 0x8000_001F, 0x8000_0023, 0x8000_001C].contains(command), let nameOffset = reader.u32(at + 8),
                let text = reader.cString(at: UInt64(nameOffset), in: body)
            {
                if command == 0x8000_001C { runPaths.append(text) } else if needed.count < ELFImage.maxNeeded { needed.append(text) }
            }
            offset += Int(size)
        }
        let dynamicSwift = needed.contains { $0.hasSuffix("/libswiftCore.dylib") }
        return ProviderBinary(
            platform: platform, runtime: dynamicSwift ? .swiftDynamic(swiftVersion: ProviderBinary.unknownSwiftVersion) : .native,
            neededLibraries: needed, runPaths: runPaths)
    }
}

/// Dotted numeric versions ("2.34", "6.3.1") compared component by component.
enum DottedVersion {
    /// The components, or `nil` unless the text is 1–6 dot-separated numbers of at most 9 digits.
    static func parse(_ text: String) -> [Int]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...6).contains(parts.count) else { return nil }
        var result: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 9, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(part) else { return nil }
            result.append(value)
        }
        return result
    }

    /// Numeric order (missing components count as 0: "6.3" == "6.3.0"; "2.9" < "2.34"); texts
    /// that are not numeric versions compare as strings.
    static func compare(_ lhs: String, _ rhs: String) -> ComparisonOrder {
        guard let left = parse(lhs), let right = parse(rhs) else {
            return lhs == rhs ? .orderedSame : (lhs < rhs ? .orderedAscending : .orderedDescending)
        }
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            if a != b { return a < b ? .orderedAscending : .orderedDescending }
        }
        return .orderedSame
    }

    /// The result of `compare`.
    enum ComparisonOrder {
        /// Left is older.
        case orderedAscending
        /// Same version.
        case orderedSame
        /// Left is newer.
        case orderedDescending
    }
}
