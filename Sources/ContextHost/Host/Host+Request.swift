import ContextProviderKit
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Host {
    /// Runs `work` in a task that answers `reply` with its result or error; `$/cancelRequest`
    /// cancels the task.
    package func respond(_ reply: Reply, server: RPCServer, _ work: @escaping @Sendable () async throws(RPCError) -> JSONValue) {
        let pending = server.track(reply)
        let task = Task {
            do throws(RPCError) {
                let result = try await work()
                reply.sendResult(result)
            } catch {
                reply.sendError(error)
            }
        }
        pending.setCancel { task.cancel() }
    }
}

extension Host {
    /// The notification channel of one provider request made for the client: `$/progress` goes
    /// to the client when it passed `token` and speaks version 2, `$/log` to the host's log and,
    /// under version 2, to the client as `log/message` within its level.
    package func events(providerID: String, token: ProgressToken?) -> RequestEvents {
        let v2 = speaksVersion2.load(ordering: .acquiring)
        return RequestEvents(
            providerID: providerID, token: v2 ? token : nil, forwardsLogs: v2,
            clientLogLevel: { [weak self] in self?.logLevel.withLock { $0 } ?? .off }, logger: logger,
            emit: { [weak self] method, params in self?.notify(method, params: params) })
    }

    /// A request's `progressToken`, read from its raw params only when the bytes name one (the
    /// `items/*` hot path pays one `memmem`).
    package static func progressToken(_ request: Request) throws(RPCError) -> ProgressToken? {
        try request.withRawParams { bytes, range throws(RPCError) -> ProgressToken? in
            guard let range, contains(progressTokenKey, in: UnsafeRawBufferPointer(rebasing: bytes[range])) else { return nil }
            guard let member = try? RawObject.member("progressToken", of: bytes, in: range),
                let value = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: bytes[member]))
            else { return nil }
            if value.isNull { return nil }
            do throws(JSONDecodeError) {
                return try ProgressToken(json: value, path: "params.progressToken")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
    }
}

/// The bytes `Host.progressToken` looks for first.
private let progressTokenKey = Array("progressToken".utf8)

/// Whether `haystack` contains `needle` (not empty) anywhere.
private func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
    guard let first = needle.first, needle.count <= haystack.count, let base = haystack.baseAddress else { return false }
    let last = haystack.count - needle.count
    var offset = 0
    while offset <= last {
        guard let hit = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
        let position = base.distance(to: UnsafeRawPointer(hit))
        if needle.withUnsafeBytes({ memcmp(hit, $0.baseAddress!, needle.count) }) == 0 { return true }
        offset = position + 1
    }
    return false
}
