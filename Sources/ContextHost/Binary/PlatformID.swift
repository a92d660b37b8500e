/// A platform a provider library is built for, as named in bundles and manifests.
package enum PlatformID: String, Sendable, CaseIterable, Comparable {
    /// Linux on 64-bit x86.
    case linuxX86_64 = "linux-x86_64"
    /// Linux on 64-bit ARM.
    case linuxAarch64 = "linux-aarch64"
    /// macOS on Apple silicon.
    case macosArm64 = "macos-arm64"
    /// macOS on Intel.
    case macosX86_64 = "macos-x86_64"

    /// The platform this host was compiled for, or `nil` when it is none of the above.
    package static var current: PlatformID? {
        #if os(Linux) && arch(x86_64)
            .linuxX86_64
        #elseif os(Linux) && arch(arm64)
            .linuxAarch64
        #elseif os(macOS) && arch(arm64)
            .macosArm64
        #elseif os(macOS) && arch(x86_64)
            .macosX86_64
        #else
            nil
        #endif
    }

    /// Orders by raw value (stable listing order in bundles and messages).
    package static func < (lhs: PlatformID, rhs: PlatformID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How a provider library gets its Swift runtime, if it has Swift code at all.
package enum ProviderRuntime: Sendable, Equatable {
    /// No Swift runtime needed (C, Rust, Zig, …).
    case native
    /// Swift built with `-static-stdlib`: carries its own runtime with hidden symbols.
    case swiftStatic
    /// Swift linked against the shared runtime (`libswiftCore.so`) of this Swift version
    /// (`ProviderBinary.unknownSwiftVersion` when the binary does not record it).
    case swiftDynamic(swiftVersion: String)

    /// The manifest spelling: `native`, `swift-static` or `swift-dynamic`.
    package var kind: String {
        switch self {
        case .native: "native"
        case .swiftStatic: "swift-static"
        case .swiftDynamic: "swift-dynamic"
        }
    }

    /// The runtime a manifest declares: its `kind` and, for `swift-dynamic`, the Swift version;
    /// `nil` for an unknown kind or a `swift-dynamic` without a version.
    package init?(kind: String, swiftVersion: String?) {
        switch kind {
        case "native": self = .native
        case "swift-static": self = .swiftStatic
        case "swift-dynamic":
            guard let swiftVersion, !swiftVersion.isEmpty else { return nil }
            self = .swiftDynamic(swiftVersion: swiftVersion)
        default: return nil
        }
    }

    /// One line naming the runtime, as the lock file records it and the worker is told:
    /// `native`, `swift-static` or `swift-dynamic 6.3.1`.
    package var text: String {
        switch self {
        case .native: "native"
        case .swiftStatic: "swift-static"
        case .swiftDynamic(let version): "swift-dynamic \(version)"
        }
    }

    /// `text` read back; nil for anything else (the swift version is at most 64 bytes).
    package init?(text: String) {
        switch text {
        case "native": self = .native
        case "swift-static": self = .swiftStatic
        default:
            guard text.hasPrefix("swift-dynamic "), text.utf8.count <= 64 else { return nil }
            self = .swiftDynamic(swiftVersion: String(text.dropFirst("swift-dynamic ".count)))
        }
    }
}
