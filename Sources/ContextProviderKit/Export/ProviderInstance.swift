import CContextProvider

/// Where an answer goes: the host's reply callback and its opaque context.
struct ReplyTarget: @unchecked Sendable {
    let function: ctxp_reply_fn
    let context: UnsafeMutableRawPointer?

    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { function(context, $0.baseAddress, $0.count) }
    }
}

/// JSON-RPC response bytes, written directly without building an envelope value.
enum Wire {
    private static let resultPrefix: [UInt8] = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    private static let resultInfix: [UInt8] = Array(#","result":"#.utf8)
    private static let errorInfix: [UInt8] = Array(#","error":"#.utf8)

    static func result(id: Int, _ result: JSONValue) -> [UInt8] {
        Self.result(id: id, writing: result)
    }

    static func result(id: Int, writing result: some WireResult) -> [UInt8] {
        var output = resultStart(id: id, capacity: result.estimatedJSONBytes)
        result.appendJSON(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// A result response up to its `result` value, with room for `capacity` bytes more; the
    /// caller appends the value and the closing brace.
    static func resultStart(id: Int, capacity: Int) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(capacity + 48)
        output.append(contentsOf: resultPrefix)
        JSONWriter.appendInteger(Int64(id), to: &output)
        output.append(contentsOf: resultInfix)
        return output
    }

    static func error(id: JSONValue, _ error: ProviderError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        output.append(contentsOf: resultPrefix)
        JSONWriter.append(id, to: &output)
        output.append(contentsOf: errorInfix)
        JSONWriter.append(error.json, to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    static func error(id: Int, _ error: ProviderError) -> [UInt8] {
        Self.error(id: .number(Double(id)), error)
    }
}

/// A request in flight: its task (once started) and where its answer goes. Not nested in the
/// generic `ProviderInstance`, so the pending table's type needs no generic metadata at run time.
private struct Pending {
    var task: Task<Void, Never>?
    let target: ReplyTarget
    /// Which registration of the id this is: a host may reuse an id once it is answered, and a
    /// task must be recorded for the request that started it, not for a later one.
    let serial: UInt64
    /// Its notifications' way out (`ProviderContext.reportProgress`, `log`), once its task runs.
    var channel: RequestChannel? = nil
}

/// A method's result as it is written into the response.
protocol WireResult: Sendable {
    /// Appends the compact JSON text.
    func appendJSON(to output: inout [UInt8])
    /// About how long that text is (for the response buffer's first allocation).
    var estimatedJSONBytes: Int { get }
}

extension JSONValue: WireResult {
    func appendJSON(to output: inout [UInt8]) { JSONWriter.append(self, to: &output) }
    var estimatedJSONBytes: Int { 256 }
}

/// What `ProviderInstance.accept` found: the instance closed, the id in flight already, or the
/// request registered under a serial.
private enum Acceptance {
    case closed, duplicate, accepted(UInt64)
}

/// The `item/previewMany` result, `{"previews": [{"chip": …} | {"error": …}, …]}`, written directly.
struct Previews: WireResult {
    var entries: [Result<ContextChip, ProviderError>] = []

    func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: Self.start.utf8)
        for (index, entry) in entries.enumerated() {
            Self.append(entry, first: index == 0, to: &output)
        }
        output.append(contentsOf: Self.end.utf8)
    }

    /// The text before the entries, and after them.
    static let start = #"{"previews":["#
    static let end = "]}"

    /// One entry, after a comma unless it is the first.
    static func append(_ entry: Result<ContextChip, ProviderError>, first: Bool, to output: inout [UInt8]) {
        if !first { output.append(UInt8(ascii: ",")) }
        switch entry {
        case .success(let chip):
            output.append(contentsOf: #"{"chip":"#.utf8)
            chip.appendJSON(to: &output)
        case .failure(let error):
            output.append(contentsOf: #"{"error":"#.utf8)
            JSONWriter.append(error.json, to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    var estimatedJSONBytes: Int { 32 + entries.count * 1024 }
}

extension ContextChip: WireResult {
    /// The same text as `json` written by `JSONWriter`, without building the value first (a chip
    /// is the answer to every preview).
    func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"ctxui":"#.utf8)
        JSONWriter.appendNumber(Double(ctxuiVersion), to: &output)
        Self.append("icon", icon, to: &output)
        Self.append("title", title, to: &output)
        if let subtitle { Self.append("subtitle", subtitle, to: &output) }
        Self.append("tone", tone.rawValue, to: &output)
        if let thumbnail { Self.append("thumbnail", thumbnail, to: &output) }
        if let accessory {
            output.append(contentsOf: #","accessory":"#.utf8)
            JSONWriter.append(accessory.json, to: &output)
        }
        Self.append("accessibilityLabel", accessibilityLabel, to: &output)
        Self.append("fallbackText", fallbackText, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// `,"key":"value"` (keys are plain ASCII names).
    private static func append(_ key: StaticString, _ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: ","))
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
        JSONWriter.appendString(value, to: &output)
    }

    var estimatedJSONBytes: Int {
        160 + icon.utf8.count + title.utf8.count + (subtitle?.utf8.count ?? 0) + (thumbnail?.utf8.count ?? 0)
            + accessibilityLabel.utf8.count + fallbackText.utf8.count + (accessory == nil ? 0 : 256)
    }
}

/// The type-erased instance behind the C `instance` pointer.
class ProviderInstanceBase: @unchecked Sendable {
    /// Handles one message from `call`.
    func receive(_ message: UnsafeRawBufferPointer, reply: ctxp_reply_fn?, context: UnsafeMutableRawPointer?) {
        fatalError("abstract")
    }

    /// Handles `close`.
    func close() {}
}

/// One open instance of provider `P`: decodes requests, runs provider methods in tasks (chips
/// from `immediatePreview` on the calling thread), answers each request exactly once, and honours
/// cancellation and `close`.
final class ProviderInstance<P: ContextProvider>: ProviderInstanceBase, @unchecked Sendable {
    let provider: P
    let context: ProviderContext
    private let infoResult: JSONValue
    private let immediateMethods: ProviderMethods

    /// The requests in flight and who is replying.
    private struct State {
        var pending: [Int: Pending] = [:]
        var nextSerial: UInt64 = 0
        var closed = false
        var replyingThreads: [ThreadHandle] = []
    }

    private let state = Locked(State())
    /// Requests this instance sent to the host (`host/fetch`), waiting for answers.
    let hostCalls = HostCalls()

    init(provider: P, context: ProviderContext) {
        self.provider = provider
        self.context = context
        self.infoResult = P.metadata.json
        self.immediateMethods = P.immediateMethods
    }

    // MARK: Messages

    override func receive(_ message: UnsafeRawBufferPointer, reply: ctxp_reply_fn?, context: UnsafeMutableRawPointer?) {
        let target = reply.map { ReplyTarget(function: $0, context: context) }
        if let target, immediateMethods.contains(.preview), let id = ProviderRequest.previewManyID(message) {
            // A batch of previews as hosts write it: read (and checked) in its task rather than
            // here, so a host that splits a long list into several calls gets them read
            // side by side too, and `call` returns at once.
            runPreviewMany(id, target, message: Array(message))
            return
        }
        if target == nil, JSONRPCResponsePrefix.matches(message) {
            // The host's answer to a request this instance sent it (`host/fetch`), told by its
            // first bytes: not scanned as a request first (a fetch's answer carries its body).
            if let answer = try? JSONReader.parse(message) { hostCalls.deliver(answer) }
            return
        }
        handle(message, target: target)
    }

    /// Reads and answers one message (`receive`, less the `item/previewMany` shortcut).
    private func handle(_ message: UnsafeRawBufferPointer, target: ReplyTarget?) {
        var request: ProviderRequest
        do {
            request = try ProviderRequest(scanning: message)
        } catch {
            switch error {
            case .parse(let error, let id):
                // (With the request's id when it came before the fault: a host then passes the
                // error to its client instead of a reply that answers nothing.)
                target?.send(Wire.error(id: id ?? .null, ProviderError(code: ProviderError.Code.parseError, message: "Parse error: \(error)")))
            case .notAnObject(let typeName):
                target?.send(Wire.error(id: .null, .invalidRequest("expected a JSON object, got \(typeName)")))
            }
            return
        }
        let idValue = request.id
        guard request.jsonrpc == .string("2.0") else {
            target?.send(Wire.error(id: idValue ?? .null, .invalidRequest("jsonrpc must be \"2.0\"")))
            return
        }
        guard case .string(let method)? = request.method else {
            if request.method == nil, idValue != nil, let answer = try? JSONReader.parse(message),
                answer["result"] != nil || answer["error"] != nil
            {
                // The host's answer to a request this instance sent it (`host/fetch`).
                hostCalls.deliver(answer)
                return
            }
            target?.send(Wire.error(id: idValue ?? .null, .invalidRequest("method must be a string")))
            return
        }
        guard let idValue else {
            // A notification: no answer.
            if method == "$/cancelRequest", let id = (try? request.params.value())?["id"]?.intValue { cancel(id) }
            return
        }
        guard let target else { return }
        guard let id = idValue.intValue else {
            target.send(Wire.error(id: idValue, .invalidRequest("id must be an integer")))
            return
        }
        do {
            try dispatch(method, id: id, params: &request.params, previewItems: request.previewItems, target: target)
        } catch {
            target.send(Wire.error(id: id, ProviderError.from(error)))
        }
    }

    /// Decodes params synchronously (so bad params answer at once), then runs the provider method.
    private func dispatch(
        _ method: String, id: Int, params: inout RequestParams, previewItems: PreviewItems?, target: ReplyTarget
    ) throws(JSONDecodeError) {
        let provider = self.provider
        switch method {
        case ItemPreviewRequest.method:
            // (The item is moved, not copied, and the provider reached through `self`: a preview
            // is the most frequent request, and each copy costs a reference count per string.)
            let item = try params.takeItem()
            guard let serial = accept(id, target) else { return }
            // A chip made on this thread (`immediatePreview`) is answered here, with no task. (The
            // request is registered all the same, so a duplicate id, a cancel or `close` meanwhile
            // is handled as for any request.)
            let immediate: [UInt8]?
            do {
                immediate = try provider.immediatePreview(item).map { Wire.result(id: id, writing: $0.adapted(to: context.ui)) }
            } catch {
                immediate = Wire.error(id: id, ProviderError.from(error))
            }
            if let immediate {
                finish(id, immediate, serial: serial)
                return
            }
            run(id, target, .preview, accepted: serial, writing: { [self] in try await self.provider.preview(item).adapted(to: self.context.ui) })
        case ItemPreviewManyRequest.method:
            // Only for previews computed from the item alone (declared immediate): those are made
            // one after another in one task. Other providers' previews may be slow, and each is
            // better off as its own item/preview with its own timeout: -32601 tells the host so.
            guard immediateMethods.contains(.preview) else {
                target.send(Wire.error(id: id, ProviderError(code: ProviderError.Code.methodNotFound, message: "Method not found: \(method) (previews are not declared immediate; use item/preview)")))
                return
            }
            // (Requests written as hosts write them are read in their task: `runPreviewMany`.)
            let items = try Self.items(previewItems, params: params)
            let ui = context.ui
            run(id, target, writing: { try await Self.previews(of: items, provider: provider, ui: ui) })
        case ItemDetailRequest.method:
            let item = try params.takeItem()
            let ui = self.context.ui
            run(id, target, .detail) { try await provider.detail(item).adapted(to: ui).json }
        case ItemDescribeRequest.method:
            let item = try params.takeItem()
            run(id, target, .describe) { ["text": .string(try await provider.describe(item))] }
        case ItemEncodeRequest.method:
            let reader = try JSONObjectReader(params, path: "params")
            let item = try reader.decode("item", as: ContextItem.self)
            let representation = try reader.optionalString("representation")
            run(id, target, .encode) { try await provider.encode(item, representation: representation).json }
        case ProviderInfoRequest.method:
            target.send(Wire.result(id: id, infoResult))
        case ConformanceSamplesRequest.method:
            let samples = P.conformanceSamples
            if samples.isEmpty {
                target.send(Wire.error(id: id, ProviderError(code: ProviderError.Code.methodNotFound, message: "Method not found: \(method)")))
            } else {
                target.send(Wire.result(id: id, ["samples": .array(samples.map(\.json))]))
            }
        case ProviderAvailabilityRequest.method:
            run(id, target, .availability) { try await provider.availability().json }
        case ProviderMakeContextRequest.method:
            run(id, target) { ["item": try await provider.makeContext()?.json ?? .null] }
        case ProviderCollectStartRequest.method:
            let reader = try JSONObjectReader(params, path: "params")
            let sessionId = try reader.string("sessionId")
            run(id, target) { try await provider.startCollection(sessionId: sessionId).json }
        case ProviderCollectQueryRequest.method:
            let reader = try JSONObjectReader(params, path: "params")
            let sessionId = try reader.string("sessionId")
            let stepId = try reader.string("stepId")
            let fieldId = try reader.string("fieldId")
            let query = try reader.string("query")
            let values = FormValues(try reader.optionalObject("values")?.object ?? JSONObject())
            run(id, target, .query) {
                let options = try await provider.query(
                    query, fieldId: fieldId, stepId: stepId, sessionId: sessionId, values: values)
                return ["options": .array(options.map(\.json))]
            }
        case ProviderCollectSubmitRequest.method:
            let reader = try JSONObjectReader(params, path: "params")
            let sessionId = try reader.string("sessionId")
            let stepId = try reader.string("stepId")
            let values = FormValues(try reader.object("values").object)
            run(id, target) {
                if let form = try await provider.form(forStep: stepId, sessionId: sessionId, values: values) {
                    let errors = form.validate(values)
                    if !errors.isEmpty { return SubmitOutcome.invalid(fieldErrors: errors).json }
                }
                try Task.checkCancellation()
                return try await provider.submit(stepId: stepId, values: values, sessionId: sessionId).json
            }
        case ProviderCollectCancelRequest.method:
            let reader = try JSONObjectReader(params, path: "params")
            let sessionId = try reader.string("sessionId")
            run(id, target) {
                try await provider.cancelCollection(sessionId: sessionId)
                return .object(JSONObject())
            }
        default:
            target.send(Wire.error(id: id, ProviderError(code: ProviderError.Code.methodNotFound, message: "Method not found: \(method)")))
        }
    }

    /// `item/previewMany`'s items, as read with the message (`ProviderRequest.previewItems`);
    /// params that are not an object with an `items` array are decoded the general way, which
    /// names what is wrong.
    static func items(_ read: PreviewItems?, params: RequestParams) throws(JSONDecodeError) -> [Result<ContextItem, JSONDecodeError>] {
        let maximum = PreviewItems.maximumPreviewBatch
        if let read {
            guard read.count <= maximum else {
                throw JSONDecodeError(path: "params.items", message: "\(read.count) items; at most \(maximum) per call")
            }
            return read.items
        }
        let items = try JSONObjectReader(params, path: "params").array("items") { value, path in
            Result { () throws(JSONDecodeError) in try ContextItem(json: value, path: path) }
        }
        guard items.count <= maximum else {
            throw JSONDecodeError(path: "params.items", message: "\(items.count) items; at most \(maximum) per call")
        }
        return items
    }

    /// `item/previewMany` written as hosts write it (`ProviderRequest.previewManyID`), read in its
    /// task. A message that turns out to be anything but a plain request with an `items` array
    /// (repeated members, bad JSON, too many items) is handled from there as `call` handles
    /// every message, so it is answered exactly as it would have been.
    ///
    /// Each item's chip is made and written as soon as the item is read, so the item and the
    /// chip are freed before the next item is read: a batch holds one item's strings at a time
    /// (the allocator reuses them; keeping a whole batch alive made most allocations take its slow
    /// path). Items from the first one whose chip is not immediate on are kept and previewed after
    /// the message is read, in order. (A message found out only at its end to be something else —
    /// trailing bytes, more than `maximumPreviewBatch` items, a later `method` — may have had
    /// some chips made for nothing: at most one message's worth, and `immediatePreview` is
    /// computed from the item alone.)
    private func runPreviewMany(_ id: Int, _ target: ReplyTarget, message: [UInt8]) {
        let provider = self.provider
        let ui = context.ui
        start(id, target) { [self] serial async -> [UInt8]? in
            var output = Wire.resultStart(id: id, capacity: message.count)
            output.append(contentsOf: Previews.start.utf8)
            var written = 0
            var waiting: [Result<ContextItem, JSONDecodeError>] = []
            var cancelled = false
            let read = message.withUnsafeBytes { buffer -> Bool in
                let request = try? ProviderRequest(scanning: buffer) { item in
                    if cancelled || Task.isCancelled {
                        cancelled = true
                        return
                    }
                    guard waiting.isEmpty, case .success(let plain) = item else {
                        if waiting.isEmpty, case .failure(let error) = item {
                            Previews.append(.failure(ProviderError.from(error)), first: written == 0, to: &output)
                            written += 1
                        } else {
                            waiting.append(item)
                        }
                        return
                    }
                    do {
                        guard let chip = try provider.immediatePreview(plain) else { return waiting.append(item) }
                        Previews.append(.success(chip.adapted(to: ui)), first: written == 0, to: &output)
                    } catch is CancellationError {
                        cancelled = true
                        return
                    } catch {
                        Previews.append(.failure(ProviderError.from(error)), first: written == 0, to: &output)
                    }
                    written += 1
                }
                guard let request, request.streamedPreviewItems, request.jsonrpc == .string("2.0"),
                    request.id?.intValue == id, request.method == .string(ItemPreviewManyRequest.method),
                    let items = request.previewItems, items.count <= PreviewItems.maximumPreviewBatch
                else { return false }
                return true
            }
            guard read else {
                // Not a plain batch after all: what was written is dropped, and the message handled
                // the ordinary way.
                handleAgain(id, serial: serial, target, message)
                return nil
            }
            do {
                if cancelled { throw CancellationError() }
                // (The first waiting item is one `immediatePreview` made no chip for: it is not asked again.)
                for entry in try await Self.previews(of: waiting, provider: provider, ui: ui, firstAskedAlready: true).entries {
                    Previews.append(entry, first: written == 0, to: &output)
                    written += 1
                }
            } catch {
                return Wire.error(id: id, ProviderError.from(error))
            }
            output.append(contentsOf: Previews.end.utf8)
            output.append(UInt8(ascii: "}"))
            return output
        }
    }

    /// Withdraws registration `serial` of request `id` (unless it was cancelled or the instance
    /// closed meanwhile: then the id may be a new request's) and handles its message the ordinary
    /// way.
    private func handleAgain(_ id: Int, serial: UInt64, _ target: ReplyTarget, _ message: [UInt8]) {
        let withdrawn = state.withLock { state -> Bool in
            guard !state.closed, let index = state.pending.index(forKey: id), state.pending.values[index].serial == serial else { return false }
            state.pending.remove(at: index)
            state.replyingThreads.append(ThreadID.current)
            return true
        }
        guard withdrawn else { return }
        message.withUnsafeBytes { handle($0, target: target) }
        doneReplying()
    }

    /// `item/previewMany`: one chip or error per item, in order. An item whose preview fails gets
    /// the error `item/preview` would have answered; cancelling the request stops the batch.
    ///
    /// `firstAskedAlready`: the first item is one whose `immediatePreview` already returned nil, so
    /// only `preview` is called for it.
    private static func previews(
        of items: [Result<ContextItem, JSONDecodeError>], provider: P, ui: UICapabilities, firstAskedAlready: Bool = false
    ) async throws -> Previews {
        var previews = Previews()
        previews.entries.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            try Task.checkCancellation()
            do {
                let item = try item.get()
                if !(firstAskedAlready && index == 0), let chip = try provider.immediatePreview(item) {
                    previews.entries.append(.success(chip.adapted(to: ui)))
                } else {
                    previews.entries.append(.success(try await provider.preview(item).adapted(to: ui)))
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                previews.entries.append(.failure(ProviderError.from(error)))
            }
        }
        return previews
    }

    // MARK: Requests in flight

    /// Runs `work` in a task and answers request `id` with its result, unless the request was
    /// cancelled or the instance closed first.
    private func run(
        _ id: Int, _ target: ReplyTarget, _ method: ProviderMethods = [],
        _ work: @escaping @Sendable () async throws -> JSONValue
    ) {
        run(id, target, method, writing: work)
    }

    /// `run` for a result written without a `JSONValue` (a chip).
    private func run<Result: WireResult>(
        _ id: Int, _ target: ReplyTarget, _ method: ProviderMethods = [], accepted: UInt64? = nil,
        writing work: @escaping @Sendable () async throws -> Result
    ) {
        let immediate = !method.isEmpty && immediateMethods.contains(method)
        guard let serial = accepted ?? accept(id, target) else { return }
        // Bound to the task, so the provider's progress and log calls reach this request; closed
        // before the response.
        let channel = RequestChannel(target: target, hostCalls: hostCalls)
        // (One task closure, capturing `work` itself: a preview is the most frequent request, and
        // each closure wrapped around another is an allocation more.)
        let task: Task<Void, Never>
        if immediate, #available(macOS 26.0, iOS 26.0, *) {
            task = Task.immediate { [self] in
                let response = await RequestChannel.$current.withValue(channel) { await Self.response(id, work) }
                channel.close()
                finish(id, response, serial: serial)
            }
        } else {
            task = Task { [self] in
                let response = await RequestChannel.$current.withValue(channel) { await Self.response(id, work) }
                channel.close()
                finish(id, response, serial: serial)
            }
        }
        record(task, for: id, serial: serial, channel: channel)
    }

    /// The response to request `id`: `work`'s result, or the error it threw.
    private static func response<Result: WireResult>(_ id: Int, _ work: @Sendable () async throws -> Result) async -> [UInt8] {
        do {
            return Wire.result(id: id, writing: try await work())
        } catch {
            return Wire.error(id: id, ProviderError.from(error))
        }
    }

    /// Registers request `id` and runs `body` (given the registration's serial) in a task;
    /// answers with the response `body` returns, unless the request was cancelled or the instance
    /// closed first (nil: `body` saw to the request itself).
    private func start(_ id: Int, _ target: ReplyTarget, _ body: @escaping @Sendable (_ serial: UInt64) async -> [UInt8]?) {
        guard let serial = accept(id, target) else { return }
        let channel = RequestChannel(target: target, hostCalls: hostCalls)
        let task = Task { [self] in
            let response = await RequestChannel.$current.withValue(channel) { await body(serial) }
            channel.close()
            if let response { finish(id, response, serial: serial) }
        }
        record(task, for: id, serial: serial, channel: channel)
    }

    /// Registers request `id` as in flight and returns the registration's serial; nil (after
    /// answering it, unless the instance is closed) when it cannot run.
    private func accept(_ id: Int, _ target: ReplyTarget) -> UInt64? {
        let outcome: Acceptance = state.withLock { state in
            if state.closed { return .closed }
            state.nextSerial &+= 1
            // (One lookup: a duplicate is put back.)
            if let duplicate = state.pending.updateValue(Pending(task: nil, target: target, serial: state.nextSerial), forKey: id) {
                state.pending[id] = duplicate
                // (So `close` waits until the refusal is sent.)
                state.replyingThreads.append(ThreadID.current)
                return .duplicate
            }
            return .accepted(state.nextSerial)
        }
        switch outcome {
        case .closed:
            return nil
        case .duplicate:
            target.send(Wire.error(id: id, .invalidRequest("request id \(id) is already in flight")))
            doneReplying()
            return nil
        case .accepted(let serial):
            return serial
        }
    }

    /// Records the task of request `id`'s registration `serial`, for cancellation. If that
    /// registration is no longer in flight, it was answered (as a rule an immediate method is done
    /// before `Task.immediate` returns) or cancelled before its task was known: the task is
    /// cancelled, which does nothing to a finished one. (The id may be in flight again meanwhile,
    /// as a new request: its entry is not touched.)
    private func record(_ task: Task<Void, Never>, for id: Int, serial: UInt64, channel: RequestChannel? = nil) {
        let cancelledMeanwhile: Bool = state.withLock { state in
            // (One lookup: a preview's registration is usually answered by now.)
            guard let index = state.pending.index(forKey: id), state.pending.values[index].serial == serial else { return true }
            state.pending.values[index].task = task
            state.pending.values[index].channel = channel
            return false
        }
        if cancelledMeanwhile {
            channel?.close()
            task.cancel()
        }
    }

    /// Answers registration `serial` of request `id` with `response` if nobody answered it yet
    /// (a cancelled request's id may be in flight again, as a new request: that one is not
    /// touched).
    private func finish(_ id: Int, _ response: [UInt8], serial: UInt64) {
        let entry = state.withLock { state -> Pending? in
            guard !state.closed, let index = state.pending.index(forKey: id), state.pending.values[index].serial == serial else { return nil }
            state.replyingThreads.append(ThreadID.current)
            return state.pending.remove(at: index).value
        }
        guard let entry else { return }
        entry.channel?.close()
        entry.target.send(response)
        doneReplying()
    }

    /// `$/cancelRequest`: cancels the task and answers `-32800`, once.
    private func cancel(_ id: Int) {
        let entry = state.withLock { state -> Pending? in
            guard !state.closed, let entry = state.pending.removeValue(forKey: id) else { return nil }
            state.replyingThreads.append(ThreadID.current)
            return entry
        }
        guard let entry else { return }
        entry.task?.cancel()
        entry.channel?.close()
        entry.target.send(
            Wire.error(id: id, ProviderError(code: ProviderError.Code.requestCancelled, message: "Request cancelled")))
        doneReplying()
    }

    private func doneReplying() {
        let me = ThreadID.current
        state.withLock { state in
            if let index = state.replyingThreads.firstIndex(where: { ThreadID.equal($0, me) }) {
                state.replyingThreads.remove(at: index)
            }
        }
    }

    /// Cancels everything in flight and waits until no reply callback is running (except one on
    /// this very thread, e.g. a host that closes from inside a callback), so no callback runs
    /// after `close` returns.
    override func close() {
        let (tasks, channels): ([Task<Void, Never>], [RequestChannel]) = state.withLock { state in
            state.closed = true
            let tasks = state.pending.values.compactMap(\.task)
            let channels = state.pending.values.compactMap(\.channel)
            state.pending.removeAll()
            return (tasks, channels)
        }
        // (Each waits for a notification being sent: none is sent after `close` returns.)
        for channel in channels { channel.close() }
        hostCalls.close()
        for task in tasks { task.cancel() }
        let me = ThreadID.current
        while state.withLock({ $0.replyingThreads.contains { !ThreadID.equal($0, me) } }) {
            ThreadID.yield()
        }
    }
}

extension ProviderError {
    /// A `-32600` error.
    static func invalidRequest(_ detail: String) -> ProviderError {
        ProviderError(code: Code.invalidRequest, message: "Invalid Request: \(detail)")
    }
}
