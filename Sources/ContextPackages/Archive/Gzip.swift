import ContextHost
import CZlib

/// Why a gzip stream could not be inflated (the tar reader words the message for its entry).
enum GzipFailure: Error {
    /// The bytes do not start with the gzip magic number.
    case notGzip
    /// The compressed stream ends before its end-of-stream marker and trailer.
    case truncated
    /// zlib refused the data (bad deflate data, CRC-32 or length mismatch); zlib's reason.
    case damaged(String)
    /// Inflating produced more than the cap.
    case tooLarge(limit: Int)
    /// Bytes follow the first gzip member (a second member or garbage).
    case trailingData(count: Int)
}

/// Inflates one gzip member on demand, never more than `limit` bytes in all, so a bomb stops at
/// the cap having used at most the caller's buffers. `input` must stay valid while it is used.
final class GzipInflater {
    /// zlib's state (heap-allocated: zlib keeps pointers into it).
    private let stream: UnsafeMutablePointer<z_stream>
    /// The compressed bytes.
    private let input: UnsafeRawBufferPointer
    /// How far `input` has been handed to zlib.
    private var fed = 0
    /// Whether `inflateInit2_` succeeded (so `inflateEnd` is due).
    private var initialized = false
    /// Inflated bytes so far.
    private(set) var produced = 0
    /// The most inflated bytes allowed.
    let limit: Int
    /// Whether the gzip trailer has been read and checked.
    private(set) var finished = false

    /// Starts inflating `input`; throws `notGzip` unless it starts with the gzip magic number.
    init(input: UnsafeRawBufferPointer, limit: Int) throws(GzipFailure) {
        self.input = input
        self.limit = limit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard input.count >= 2, input[0] == 0x1F, input[1] == 0x8B else { throw GzipFailure.notGzip }
        // 15 + 16: a 32 KiB window, gzip wrapper only (zlib checks the CRC-32 and length).
        guard inflateInit2_(stream, 15 + 16, zlibVersion(), CInt(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw GzipFailure.damaged("zlib could not start")
        }
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Fills `buffer` unless the stream ends first; answers how many bytes were written.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(GzipFailure) -> Int {
        var filled = 0
        while filled < buffer.count, !finished {
            if stream.pointee.avail_in == 0, fed < input.count, let base = input.baseAddress {
                let chunk = min(input.count - fed, 1 << 30)
                stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self) + fed)
                stream.pointee.avail_in = uInt(chunk)
                fed += chunk
            }
            guard let out = buffer.baseAddress else { return 0 }
            let want = min(buffer.count - filled, 1 << 30)
            stream.pointee.next_out = (out + filled).assumingMemoryBound(to: UInt8.self)
            stream.pointee.avail_out = uInt(want)
            let result = inflate(stream, Z_NO_FLUSH)
            let got = want - Int(stream.pointee.avail_out)
            filled += got
            produced += got
            if produced > limit { throw GzipFailure.tooLarge(limit: limit) }
            switch result {
            case Z_STREAM_END:
                finished = true
                let rest = Int(stream.pointee.avail_in) + (input.count - fed)
                if rest > 0 { throw GzipFailure.trailingData(count: rest) }
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.pointee.avail_in == 0 && fed == input.count:
                throw GzipFailure.truncated
            case Z_NEED_DICT:
                throw GzipFailure.damaged("the stream needs a preset dictionary")
            case Z_MEM_ERROR:
                throw GzipFailure.damaged("zlib ran out of memory")
            default:
                if let message = stream.pointee.msg { throw GzipFailure.damaged(String(cString: message)) }
                throw GzipFailure.damaged("zlib error \(result)")
            }
        }
        return filled
    }

    /// Compresses `bytes` as one deterministic gzip member: level 6 (9 is many times slower on
    /// repetitive data, for a few per cent), no name, mtime 0, OS 3 (Unix) on every platform. `nil` if zlib fails (out of memory).
    static func gzip(_ bytes: [UInt8]) -> [UInt8]? {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let header = UnsafeMutablePointer<gz_header>.allocate(capacity: 1)
        header.initialize(to: gz_header())
        header.pointee.os = 3
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
            header.deinitialize(count: 1)
            header.deallocate()
        }
        guard deflateInit2_(stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), CInt(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(stream) }
        guard deflateSetHeader(stream, header) == Z_OK else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count / 2 + 1024)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let ok = bytes.withUnsafeBufferPointer { input -> Bool in
            var fed = 0
            while true {
                if stream.pointee.avail_in == 0, fed < input.count, let base = input.baseAddress {
                    let size = min(input.count - fed, 1 << 30)
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: base + fed)
                    stream.pointee.avail_in = uInt(size)
                    fed += size
                }
                let flush = fed == input.count ? Z_FINISH : Z_NO_FLUSH
                let (result, got) = chunk.withUnsafeMutableBufferPointer { out -> (CInt, Int) in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = uInt(out.count)
                    let result = deflate(stream, flush)
                    return (result, out.count - Int(stream.pointee.avail_out))
                }
                output += chunk[0..<got]
                if result == Z_STREAM_END { return true }
                if result != Z_OK && result != Z_BUF_ERROR { return false }
            }
        }
        return ok ? output : nil
    }
}
