import ContextHostTestSupport
import Foundation
import Testing

@testable import ContextHost

@Suite("File bytes")
struct FileBytesTests {
    /// A file of `count` bytes whose byte i is i % 251, so a lost or repeated chunk shows.
    private func file(_ directory: TemporaryDirectory, _ count: Int) throws -> String {
        let path = directory.path + "/f\(count).bin"
        try Data((0..<count).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "the whole file comes back, whatever size it was expected to have",
        arguments: [0, 1, 4095, 65_535, 65_536, 65_537, 300_001])
    func wholeFile(count: Int) throws {
        let directory = try TemporaryDirectory()
        let path = try file(directory, count)
        let expected = (0..<count).map { UInt8($0 % 251) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        // Right, none (grows from 64 KiB), too small (the file grew since fstat), too large (it shrank).
        for expectedSize in [count, 0, count / 3, count * 2 + 10] {
            let bytes = try FileBytes.read(fd: fd, expectedSize: expectedSize)
            #expect(bytes == expected, "expected size \(expectedSize)")
            // A small file does not keep a large buffer.
            #expect(bytes.capacity < count + 4096 + 64, "capacity \(bytes.capacity) for \(count) bytes")
        }
        #expect(try FileBytes.read(path) == expected)
    }
}
