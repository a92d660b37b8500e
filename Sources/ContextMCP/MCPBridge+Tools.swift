import ContextHost
import ContextProtocol

extension MCPBridge {
    // MARK: tools/list

    func listTools(_ context: RequestContext) async {
        do throws(ResponseError) {
            respond(context, ["tools": .array(try await catalog.listForClient())], cacheable: true)
        } catch {
            fail(context.id, MCPError(MCP.Code.internalError, "The host could not list its providers: \(error.message)"))
        }
    }

    // MARK: tools/call

    func callTool(_ context: RequestContext, params: JSONObject) async {
        guard let name = params["name"]?.stringValue else {
            return fail(context.id, MCPError(MCP.Code.invalidParams, "params.name is required (the tool's name)."))
        }
        let arguments: JSONObject
        switch params["arguments"] {
        case nil, .null?: arguments = JSONObject()
        case .object(let object)?: arguments = object
        default: return fail(context.id, MCPError(MCP.Code.invalidParams, "params.arguments must be an object."))
        }
        let tool: MCPTool?
        do throws(ResponseError) {
            tool = try await catalog.tool(named: name)
        } catch {
            return respond(context, Self.toolError("The host could not list its providers: \(error.message)"))
        }
        guard let tool else {
            return fail(context.id, MCPError(MCP.Code.invalidParams, "Unknown tool: \(name) (tools/list lists the tools).", data: ["name": .string(name)]))
        }
        if let provider = await catalog.provider(tool.providerID), provider.available == false, tool.kind != .detail {
            let reason = provider.unavailableReason?.message ?? provider.error?.message ?? provider.status ?? "unknown reason"
            return respond(context, Self.toolError("\(provider.title ?? tool.providerID) is unavailable: \(reason)"))
        }
        let result: JSONObject? = await withProgress(context) { token in
            switch tool.kind {
            case .collect: return await collect(context, tool: tool, arguments: arguments, params: params, progressToken: token)
            case .make: return await make(tool, progressToken: token)
            case .search(let fields): return await search(tool, fields: fields, arguments: arguments, progressToken: token)
            case .detail: return await detail(tool, arguments: arguments, progressToken: token)
            }
        }
        guard let result, !Task.isCancelled else { return }
        respond(context, result)
    }

    /// A tool result that failed: the text for the model.
    static func toolError(_ text: String) -> JSONObject {
        ["content": [["type": "text", "text": .string(text)]], "isError": true]
    }

    /// `<slug>_collect`: runs the collection, asking the user as the client's era allows.
    /// Nil when the request was cancelled (nothing is answered).
    private func collect(
        _ context: RequestContext, tool: MCPTool, arguments: JSONObject, params: JSONObject, progressToken: ProgressToken?
    ) async -> JSONObject? {
        let run: CollectionRun
        var next: CollectionRun.Next
        if context.stateless, let requestState = params["requestState"]?.stringValue {
            guard let parked = unpark(requestState, toolName: tool.name) else {
                return Self.toolError("This request's state is unknown or expired (it lasts \(Self.requestStateLifetime), once); call \(tool.name) again.")
            }
            run = parked
            let answer = params["inputResponses"]?["form"]
            guard let action = answer?["action"]?.stringValue else {
                await run.cancel()
                return Self.toolError("The retry carried no answer to the form (inputResponses.form); call \(tool.name) again.")
            }
            next = await run.answer(action: action, content: answer?["content"]?.objectValue ?? JSONObject())
        } else {
            run = CollectionRun(host: host, providerID: tool.providerID, arguments: arguments, progressToken: progressToken)
            next = await run.start()
        }
        while true {
            if Task.isCancelled {
                await run.cancel()
                return nil
            }
            switch next {
            case .finished(let item):
                return await itemResult(item, progressToken: progressToken)
            case .failed(let text):
                return Self.toolError(text)
            case .ask(let message, let schema):
                guard context.capabilities.formElicitation else {
                    let text = await run.describeForModel()
                    await run.cancel()
                    return Self.toolError(text)
                }
                if context.stateless {
                    let requestState = await park(run, toolName: tool.name)
                    var result: JSONObject = [
                        "inputRequests": ["form": ["method": .string(MCP.Method.elicit), "params": [
                            "mode": "form", "message": .string(message), "requestedSchema": schema,
                        ]]],
                        "requestState": .string(requestState),
                    ]
                    result["_meta"] = [MCP.MetaKey.serverInfo: serverInfo]
                    result["resultType"] = "input_required"
                    if !isCancelled(context) { send(["jsonrpc": "2.0", "id": context.id, "result": .object(result)]) }
                    return nil
                }
                guard let (action, content) = await elicit(message: message, schema: schema) else {
                    await run.cancel()
                    return Task.isCancelled ? nil : Self.toolError("The form was not answered; nothing was collected.")
                }
                next = await run.answer(action: action, content: content)
            }
        }
    }

    /// `<slug>_make`.
    private func make(_ tool: MCPTool, progressToken: ProgressToken?) async -> JSONObject? {
        do throws(ResponseError) {
            guard let item = try await host.make(providerId: tool.providerID, progressToken: progressToken).item else {
                return Self.toolError("The provider made no item.")
            }
            return await itemResult(item, progressToken: progressToken)
        } catch {
            return Task.isCancelled ? nil : Self.toolError(CollectionRun.message(error, providerID: tool.providerID))
        }
    }

    /// The result of a tool that produced an item: its description as text, the resource (embedded
    /// when small, else linked), and the item as `structuredContent`. The item is kept first.
    private func itemResult(_ item: ContextItem, progressToken: ProgressToken?) async -> JSONObject {
        let description = (try? await host.describe(item, progressToken: progressToken)) ?? item.displayName
        let thumbnail = (try? await host.preview(item))?.thumbnail
        var encodings: [EncodedItem] = []
        for representation in EncodingRepresentation.allCases {
            if let encoded = try? await host.encode(item, representation: representation.rawValue), encoded.representation == representation {
                encodings.append(encoded)
            }
        }
        let stored = StoredItem(
            uri: StoredItem.uri(providerID: item.providerId, itemID: item.id), item: item, description: description,
            thumbnail: thumbnail, encodings: encodings)
        store.save(stored)
        listChanged(tools: false)
        var content: [JSONValue] = [["type": "text", "text": .string(description)]]
        if let small = encodings.first(where: { $0.representation == .text || $0.representation == .json }), small.data.count <= 2048,
            let text = String(validating: small.data, as: UTF8.self)
        {
            content.append(["type": "resource", "resource": ["uri": .string(stored.uri), "mimeType": .string(small.contentType), "text": .string(text)]])
        } else {
            content.append(.object(Self.resourceJSON(stored, link: true)))
        }
        return ["content": .array(content), "structuredContent": item.json, "isError": false]
    }

    /// `<slug>_search`: the options for a query (a session opened and closed around it).
    private func search(_ tool: MCPTool, fields: [String], arguments: JSONObject, progressToken: ProgressToken?) async -> JSONObject? {
        guard let query = arguments["query"]?.stringValue else { return Self.toolError("arguments.query is required (what to search for).") }
        let field = arguments["field"]?.stringValue ?? fields.first ?? ""
        guard fields.contains(field) else { return Self.toolError("arguments.field must be one of \(fields.joined(separator: ", ")).") }
        do throws(ResponseError) {
            let started = try await host.startCollection(providerId: tool.providerID, progressToken: progressToken)
            let queried: Result<[FormOption], ResponseError>
            do throws(ResponseError) {
                queried = .success(try await host.query(sessionId: started.sessionId, fieldId: field, query: query, progressToken: progressToken))
            } catch {
                queried = .failure(error)
            }
            await CollectionRun.closeSession(started.sessionId, on: host)
            let options = try queried.get()
            let text = options.isEmpty
                ? "No matches for “\(query)”."
                : options.map { "- \($0.value): \($0.label)" + ($0.detail.map { " — \($0)" } ?? "") }.joined(separator: "\n")
            return ["content": [["type": "text", "text": .string(text)]], "structuredContent": ["options": .array(options.map(\.json))], "isError": false]
        } catch {
            return Task.isCancelled ? nil : Self.toolError(CollectionRun.message(error, providerID: tool.providerID))
        }
    }

    /// `<slug>_detail`: the detail document of a kept item as Markdown, images as image content.
    private func detail(_ tool: MCPTool, arguments: JSONObject, progressToken: ProgressToken?) async -> JSONObject? {
        guard let name = arguments["item"]?.stringValue else { return Self.toolError("arguments.item is required (the item's URI or id).") }
        let stored = store.item(uri: name) ?? store.all().last { $0.item.id == name && $0.item.providerId == tool.providerID }
        guard let stored, stored.item.providerId == tool.providerID else {
            return Self.toolError("No \(tool.providerID) item \(name) was collected here; resources/list lists them.")
        }
        do throws(ResponseError) {
            let detail = try await host.detail(stored.item, progressToken: progressToken)
            let (markdown, images) = DetailMarkdown.render(detail)
            var content: [JSONValue] = [["type": "text", "text": .string(markdown)]]
            for image in images { content.append(["type": "image", "data": .string(image.data), "mimeType": .string(image.mimeType)]) }
            return ["content": .array(content), "isError": false]
        } catch {
            return Task.isCancelled ? nil : Self.toolError(CollectionRun.message(error, providerID: tool.providerID))
        }
    }

    // MARK: Resources

    static let resourcesPageSize = 500

    func listResources(_ context: RequestContext, params: JSONObject) {
        let items = store.all()
        var start = 0
        if let cursor = params["cursor"]?.stringValue {
            guard let offset = Int(cursor), offset >= 0, offset <= items.count else {
                return fail(context.id, MCPError(MCP.Code.invalidParams, "Unknown cursor \(cursor)."))
            }
            start = offset
        }
        let end = min(items.count, start + Self.resourcesPageSize)
        var result: JSONObject = ["resources": .array(items[start..<end].map { .object(Self.resourceJSON($0, link: false)) })]
        if end < items.count { result["nextCursor"] = .string(String(end)) }
        respond(context, result, cacheable: true)
    }

    static func resourceJSON(_ stored: StoredItem, link: Bool) -> JSONObject {
        var object: JSONObject = [
            "uri": .string(stored.uri), "name": .string(stored.item.displayName), "title": .string(stored.item.displayName),
            "description": .string(stored.description),
            "mimeType": .string(stored.encodings.first?.contentType ?? "application/json"),
        ]
        if link { object["type"] = "resource_link" }
        if let thumbnail = stored.thumbnail, let (mimeType, _) = DetailMarkdown.dataURI(thumbnail) {
            object["icons"] = [["src": .string(thumbnail), "mimeType": .string(mimeType)]]
        }
        return object
    }

    func readResource(_ context: RequestContext, params: JSONObject) {
        guard let uri = params["uri"]?.stringValue else {
            return fail(context.id, MCPError(MCP.Code.invalidParams, "params.uri is required."))
        }
        guard let stored = store.item(uri: uri) else {
            return fail(context.id, MCPError(
                context.stateless ? MCP.Code.invalidParams : MCP.Code.resourceNotFound,
                "Resource not found: \(uri) (resources/list lists the collected items; a provider's tool collects new ones).",
                data: ["uri": .string(uri)]))
        }
        var contents: [JSONValue] = stored.encodings.map { encoded in
            if encoded.representation != .binary, let text = String(validating: encoded.data, as: UTF8.self) {
                return ["uri": .string(uri), "mimeType": .string(encoded.contentType), "text": .string(text)]
            }
            return ["uri": .string(uri), "mimeType": .string(encoded.contentType), "blob": .string(Base64.encode(encoded.data))]
        }
        if contents.isEmpty { contents = [["uri": .string(uri), "mimeType": "application/json", "text": .string(stored.item.json.jsonString)]] }
        respond(context, ["contents": .array(contents)], cacheable: true)
    }
}
