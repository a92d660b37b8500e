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
    /// A request's `progressToken`: from where the params check found it (`Request.itemLocation`),
    /// so the `items/*` hot path reads nothing more when there is none.
    package static func progressToken(_ request: Request) throws(RPCError) -> ProgressToken? {
        if request.itemLocation.scanned, request.itemLocation.progressToken == nil { return nil }
        return try request.withRawParams { bytes, range throws(RPCError) -> ProgressToken? in
            let member: Range<Int>
            if request.itemLocation.scanned {
                guard let found = request.itemLocation.progressToken else { return nil }
                member = found
            } else {
                guard let range, let found = try? RawObject.member("progressToken", of: bytes, in: range) else { return nil }
                member = found
            }
            guard let value = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: bytes[member])) else { return nil }
            if value.isNull { return nil }
            do throws(JSONDecodeError) {
                return try ProgressToken(json: value, path: "params.progressToken")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
    }
}
