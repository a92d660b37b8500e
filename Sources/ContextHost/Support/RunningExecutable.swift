#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The running program's file, read once: the host finds its worker binary, its bundled
/// providers and its cache stamp from it.
package enum RunningExecutable {
    /// The executable's absolute path (Linux: `/proc/self/exe`; elsewhere the first argument), or
    /// nil when it cannot be read.
    package static let path: String? = {
        #if os(Linux)
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
            return CommandLine.arguments.first
        #endif
    }()

    /// The folder the executable is in, or nil.
    package static var directory: String? {
        guard let path, let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The executable's path when it is `context-host` itself (not a test runner or an app that
    /// embeds the host), for starting workers.
    package static var contextHost: String? {
        guard let path, path.hasSuffix("/context-host") else { return nil }
        return path
    }
}
