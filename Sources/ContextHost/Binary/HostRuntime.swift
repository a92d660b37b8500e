#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What this host process runs with, for the compatibility checks of `ProviderBinary.problems`.
///
/// `swiftVersion` is the version of the compiler that built the host (`#if compiler`): a Swift
/// runtime records no version string (libswiftCore.so has no "Swift version" text, no symbol
/// versions and no debug info), and on Linux, without a stable ABI, a host only runs on the
/// runtime of the toolchain that built it — its RUNPATH names that toolchain's runtime folder.
/// `swiftToolchain` identifies the runtime actually mapped (`/proc/self/maps`) by its `.comment`.
package struct HostRuntime: Sendable, Equatable {
    /// The platform this host was compiled for.
    package var platform: PlatformID?
    /// The Swift version of the host's runtime, e.g. "6.3.1".
    package var swiftVersion: String?
    /// The glibc version (`gnu_get_libc_version()`), e.g. "2.36"; `nil` without glibc.
    package var glibcVersion: String?
    /// The folder of the `libswiftCore.so` this process mapped; libraries in it are loaded already.
    package var swiftRuntimeDirectory: String?
    /// The swiftlang llvm-project commit in that `libswiftCore.so`'s `.comment`. For `current`
    /// it is read (the whole 7 MB runtime) only when first asked: only a `swift-dynamic` library
    /// that records no Swift version needs it.
    package var swiftToolchain: String? {
        get {
            switch toolchain {
            case .known(let value): value
            case .mappedRuntime: Self.mappedToolchain
            }
        }
        set { toolchain = .known(newValue) }
    }

    /// Where `swiftToolchain` comes from.
    private enum Toolchain: Sendable, Equatable {
        case known(String?)
        case mappedRuntime
    }

    private var toolchain: Toolchain

    /// Describes a host (tests, fuzzing).
    package init(
        platform: PlatformID?, swiftVersion: String?, glibcVersion: String?, swiftRuntimeDirectory: String? = nil,
        swiftToolchain: String? = nil
    ) {
        self.platform = platform
        self.swiftVersion = swiftVersion
        self.glibcVersion = glibcVersion
        self.swiftRuntimeDirectory = swiftRuntimeDirectory
        self.toolchain = .known(swiftToolchain)
    }

    /// This process.
    package static let current: HostRuntime = {
        var host = HostRuntime(
            platform: .current, swiftVersion: hostCompilerVersion, glibcVersion: glibcVersion(),
            swiftRuntimeDirectory: mappedSwiftCore().map(directory(of:)))
        host.toolchain = .mappedRuntime
        return host
    }()

    /// The toolchain of the `libswiftCore.so` this process mapped, read once, when first needed.
    private static let mappedToolchain: String? = {
        guard let swiftCore = mappedSwiftCore(), let bytes = try? ProviderBinary.readFile(swiftCore, name: "libswiftCore.so"),
            let image = try? ELFImage(bytes: bytes, name: "libswiftCore.so")
        else { return nil }
        return ProviderBinary.toolchain(image)
    }()

    /// `gnu_get_libc_version()`, looked up at run time (absent on musl and Darwin).
    static func glibcVersion() -> String? {
        #if os(Linux)
            guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "gnu_get_libc_version") else { return nil }
            typealias Function = @convention(c) () -> UnsafePointer<CChar>?
            guard let text = unsafeBitCast(symbol, to: Function.self)() else { return nil }
            return String(cString: text)
        #else
            return nil
        #endif
    }

    /// The path of the `libswiftCore.so` mapped into this process (`/proc/self/maps`), if any.
    static func mappedSwiftCore() -> String? {
        #if os(Linux)
            guard let file = fopen("/proc/self/maps", "r") else { return nil }
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 4096)
            while fgets(&line, Int32(line.count), file) != nil {
                let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingSuffixNewline()
                guard let slash = text.firstIndex(of: "/") else { continue }
                let path = String(text[slash...])
                if path.split(separator: "/").last?.hasPrefix("libswiftCore.so") == true { return path }
            }
            return nil
        #else
            return nil
        #endif
    }

    /// The folder part of `path` ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// Line helpers.
extension String {
    /// Without one trailing newline.
    fileprivate func trimmingSuffixNewline() -> String { hasSuffix("\n") ? String(dropLast()) : self }
}
