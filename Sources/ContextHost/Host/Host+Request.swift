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
