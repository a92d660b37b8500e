#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads whole files without Foundation.
package enum FileBytes {
    package struct ReadError: Error, Sendable {
        package var reason: String
    }

    /// The file's contents.
    package static func read(_ path: String) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        return try read(fd: fd)
    }

    /// Everything in the file open at `fd`, from its start (`pread`: the descriptor's offset is
    /// left alone). `expectedSize` (from `fstat`) sizes the buffer (up to 64 MiB), so a file of
    /// that size is read with one `pread` into the array returned, and a second that finds its
    /// end; one that has grown since is still read to its end.
    package static func read(fd: Int32, expectedSize: Int = 0) throws(ReadError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(max(1 << 16, expectedSize + 1), 1 << 26))
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(filled)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            filled += count
        }
        // A file much smaller than the buffer gets an array of its own size.
        if bytes.count - filled > 4096 { return Array(bytes[..<filled]) }
        bytes.removeSubrange(filled...)
        return bytes
    }
}

/// Writes all of `bytes` to `fd`, retrying on EINTR. False if the peer is gone.
package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR || errno == EAGAIN { continue }
            return false
        }
        offset += written
    }
    return true
}
