import ContextHostClient
import ContextProtocol
import ContextProviderKit
import Dispatch
import Synchronization

/// A synchronous face on a `ContextHostClient` for the terminal composer and the gallery, which
/// run their flows on the command's own thread (never on a Swift concurrency thread, so waiting
/// here blocks no task).
package final class BlockingHost: Sendable {
    package let client: ContextHostClient

    /// Starts `context-host` with `arguments` (without the program name).
    package init(executable: String, arguments: [String], standardError: ContextHostClient.StandardError) throws(ResponseError) {
        client = try ContextHostClient(executable: executable, arguments: arguments, standardError: standardError)
    }

    /// Sends a request by method name (`XRequest.method`) and waits for its result, kept as JSON:
    /// the clients render and record the host's answers as they came.
    @discardableResult
    package func call(_ method: String, _ params: JSONValue = .object([:])) throws(ResponseError) -> JSONValue {
        let client = client
        return try wait { () async throws(ResponseError) -> JSONValue in try await client.call(method: method, params: params) }
    }

    /// Sends a notification.
    package func notify(_ method: String) {
        let client = client
        _ = wait { () async -> Bool in await client.notify(method: method, params: nil) }
    }

    /// `shutdown`, `exit`, and waits for the process.
    package func shutdown() {
        let client = client
        wait { () async in await client.close() }
    }

    private func wait<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () async throws(Failure) -> T) throws(Failure) -> T {
        let outcome = Mutex<Result<T, Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, Failure>
            do throws(Failure) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        // (Set before the signal.)
        return try outcome.withLock { $0 }!.get()
    }
}
