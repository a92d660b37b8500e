import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the CalDAV tests and `caldav-bench` share to run a real Radicale server from the test-only
/// venv (scripts/test-venv.sh): its configuration and a free loopback port for it.
public enum Radicale {
    /// Why a free port could not be found: the call that failed and its `errno`.
    public struct PortFailure: Error, CustomStringConvertible {
        public var call: String
        public var code: Int32
        public var description: String { "\(call): errno \(code) (\(String(cString: strerror(code))))" }
    }

    /// Radicale's configuration: listening on `127.0.0.1:port`, Basic auth from the plain
    /// htpasswd file `folder/users`, storage in `folder/collections`, each user owning only its
    /// own collections, warnings only. `server` lines are added to `[server]` (TLS, limits).
    public static func config(port: Int, folder: String, server: [String] = []) -> String {
        (["[server]", "hosts = 127.0.0.1:\(port)"] + server + [
            "[auth]",
            "type = htpasswd",
            "htpasswd_filename = \(folder)/users",
            "htpasswd_encryption = plain",
            "delay = 0",
            "[storage]",
            "filesystem_folder = \(folder)/collections",
            "[rights]",
            "type = owner_only",
            "[logging]",
            "level = warning",
        ]).joined(separator: "\n") + "\n"
    }

    /// A loopback TCP port the kernel says is free now (bound to port 0, then released).
    public static func freePort() throws(PortFailure) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PortFailure(call: "socket", code: errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw PortFailure(call: "bind", code: errno) }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard named == 0 else { throw PortFailure(call: "getsockname", code: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
