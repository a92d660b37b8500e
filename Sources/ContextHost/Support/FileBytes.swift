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

/// Writes all of `first` then all of `second` to `fd` with `writev`, retrying on EINTR: one
/// system call for both in the common case, so the reader (a pipe's other end) wakes once for a
/// frame's header and payload instead of possibly once for each. False if the peer is gone.
package func writeAll(_ fd: Int32, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
    guard second.count > 0 else { return writeAll(fd, first) }
    guard first.count > 0 else { return writeAll(fd, second) }
    var firstDone = 0
    while firstDone < first.count {
        var vectors = (
            iovec(iov_base: UnsafeMutableRawPointer(mutating: first.baseAddress! + firstDone), iov_len: first.count - firstDone),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: second.baseAddress!), iov_len: second.count)
        )
        let written = withUnsafeMutablePointer(to: &vectors) { $0.withMemoryRebound(to: iovec.self, capacity: 2) { writev(fd, $0, 2) } }
        if written < 0 {
            if errno == EINTR || errno == EAGAIN { continue }
            return false
        }
        if written < first.count - firstDone {
            firstDone += written
            continue
        }
        let intoSecond = written - (first.count - firstDone)
        return writeAll(fd, UnsafeRawBufferPointer(rebasing: second[intoSecond...]))
    }
    return true
}
