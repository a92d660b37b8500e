import ContextHost
import ContextProtocol

/// One MCP tool and what it does.
struct MCPTool: Sendable {
    enum Kind: Sendable, Equatable {
        /// `<slug>_collect`: a form provider's collection (arguments, then elicitation).
        case collect
        /// `<slug>_make`: a programmatic provider's item.
        case make
        /// `<slug>_search`: the options of the form's search fields for a query.
        case search(fieldIDs: [String])
        /// `<slug>_detail`: a collected item's detail document as Markdown.
        case detail
    }

    var name: String
    var kind: Kind
    var providerID: String
    /// The provider's first form step (form providers whose form could be read).
    var form: ContextForm?
    var json: JSONValue
}

/// The tools: for each provider `<slug>_collect` (form) or `<slug>_make` (programmatic), a
/// `<slug>_search` where the form has search fields, and `<slug>_detail`. The slug is the last
/// component of the provider id with `.` and `-` turned into `_` (names match
/// `[A-Za-z0-9_-]{1,64}`: major LLM APIs reject dots), made unique with `_2`, `_3`… in id order.
///
/// The set is stable: an unavailable or quarantined provider stays listed, and its tools answer a
/// tool error with the reason. Forms are read once per provider version (`collect/start`, then
/// `collect/cancel`) for the input schemas.
actor ToolCatalog {
    private let host: InProcessHost
    private var tools: [MCPTool]?
    private var providers: [String: ProviderDescription] = [:]
    /// First steps by provider id and version (nil: could not be read).
    private var forms: [String: ContextForm?] = [:]

    init(host: InProcessHost) {
        self.host = host
    }

    /// The tools as last listed to the client (to tell whether a change changed them).
    private var listed: [JSONValue]?

    /// The providers changed: the next listing asks the host again. True when the tools differ
    /// from what the client was last given (it listed them before, and the set or a tool's
    /// schema or description changed): only then is the client told.
    func invalidate() async -> Bool {
        tools = nil
        guard let listed else { return false }
        guard let now = try? await list().map(\.json) else { return true }
        return now != listed
    }

    /// The tools for `tools/list`, remembered as what the client saw.
    func listForClient() async throws(ResponseError) -> [JSONValue] {
        let json = try await list().map(\.json)
        listed = json
        return json
    }

    func list() async throws(ResponseError) -> [MCPTool] {
        if let tools { return tools }
        let described = try await host.providers().filter { $0.id != nil }.sorted { ($0.id ?? "") < ($1.id ?? "") }
        var built: [MCPTool] = []
        var used: Set<String> = []
        providers = [:]
        for provider in described {
            guard let id = provider.id else { continue }
            providers[id] = provider
            let slug = Self.uniqueSlug(Self.slug(of: id), used: &used)
            let title = provider.title ?? id
            let openWorld = (provider.permissions ?? []).contains("network")
            // The manifest's `description`, when it has one.
            let about = provider.summary.map { " " + $0 } ?? ""
            let unavailable = provider.available == false
                ? " Currently unavailable: " + (provider.unavailableReason?.message ?? provider.error?.message ?? provider.status ?? "unknown reason") + "."
                : ""
            let hasForm = provider.collection == "form" || provider.collection == "both"
            let makes = provider.collection == "programmatic" || provider.collection == "both"
            guard hasForm || makes else { continue }
            if hasForm {
                let form = await firstStep(of: provider)
                let searchFields = form?.fields.filter { $0.kind == .choice && $0.search != nil } ?? []
                let searchName = searchFields.isEmpty ? nil : slug + "_search"
                var description = "Collects a \(title) context item through the provider's form"
                if let form { description += " (\(form.title): " + form.fields.map(\.label).joined(separator: ", ") + ")" }
                description += "." + about
                description += " Pass what you know as arguments; what is missing or invalid is asked of the user."
                if provider.summary == nil, let fallback = form?.fallbackText, !fallback.isEmpty, fallback.count <= 300 {
                    description += " " + fallback
                }
                description += unavailable
                let input = form.map { FormMapping.toolInputSchema($0, searchTool: searchName) } ?? ["type": "object"]
                built.append(tool(
                    slug + "_collect", .collect, id, title: "Collect \(title)", description: description, input: input,
                    output: Self.itemSchema, openWorld: openWorld, form: form))
                if let searchName {
                    let ids = searchFields.map(\.id)
                    var properties: JSONObject = ["query": ["type": "string", "description": "What to search for."]]
                    if ids.count > 1 { properties["field"] = ["type": "string", "enum": .array(ids.map(JSONValue.string))] }
                    built.append(tool(
                        searchName, .search(fieldIDs: ids), id, title: "Search \(title)",
                        description: "Lists the options of \(title)'s "
                            + searchFields.map { "\($0.label) (\($0.id))" }.joined(separator: ", ")
                            + " for a query: values to pass to \(slug)_collect." + unavailable,
                        input: ["type": "object", "properties": .object(properties), "required": ["query"]],
                        output: nil, openWorld: openWorld, form: form))
                }
            }
            if makes {
                built.append(tool(
                    slug + "_make", .make, id, title: "Make \(title)",
                    description: "Makes a \(title) context item; takes no input." + about + unavailable, input: ["type": "object"],
                    output: Self.itemSchema, openWorld: openWorld, form: nil))
            }
            built.append(tool(
                slug + "_detail", .detail, id, title: "\(title) detail",
                description: "The detail document of a collected \(title) item, as Markdown (item: its resource URI or id).",
                input: ["type": "object", "properties": ["item": ["type": "string", "description": "The item's contexthost:// URI or its id."]], "required": ["item"]],
                output: nil, openWorld: openWorld, form: nil))
        }
        tools = built
        return built
    }

    func tool(named name: String) async throws(ResponseError) -> MCPTool? {
        try await list().first { $0.name == name }
    }

    /// The provider as last listed.
    func provider(_ id: String) -> ProviderDescription? { providers[id] }

    // MARK: Building

    /// Every tool is read-only (it reads a provider's data, or asks the user, and changes nothing
    /// outside the bridge's own item store) and not destructive; collecting and making are not
    /// idempotent (each call makes a new item); the open world is the network permission.
    private func tool(
        _ name: String, _ kind: MCPTool.Kind, _ providerID: String, title: String, description: String, input: JSONValue,
        output: JSONValue?, openWorld: Bool, form: ContextForm?
    ) -> MCPTool {
        var object: JSONObject = [
            "name": .string(name), "title": .string(title), "description": .string(description), "inputSchema": input,
            "annotations": [
                "title": .string(title), "readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": .bool(kind != .collect && kind != .make), "openWorldHint": .bool(openWorld),
            ],
        ]
        object.setIfPresent("outputSchema", output)
        return MCPTool(name: name, kind: kind, providerID: providerID, form: form, json: .object(object))
    }

    private func firstStep(of provider: ProviderDescription) async -> ContextForm? {
        guard let id = provider.id else { return nil }
        let key = id + "@" + (provider.version ?? "")
        if let known = forms[key] { return known }
        guard provider.available != false else { return nil }  // (read once it is available)
        var form: ContextForm?
        if let started = try? await host.startCollection(providerId: id) {
            form = started.form
            await CollectionRun.closeSession(started.sessionId, on: host)
        }
        forms[key] = form
        return form
    }

    /// The last component of a provider id, `.` and `-` as `_`, anything else outside
    /// `[A-Za-z0-9_]` as `_`; at most 48 characters (room for a suffix).
    static func slug(of providerID: String) -> String {
        guard let last = providerID.split(separator: ".").last else { return "provider" }
        var slug = String(last.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_") ? Character(scalar) : "_"
        })
        if slug.count > 48 { slug = String(slug.prefix(48)) }
        return slug.isEmpty ? "provider" : slug
    }

    static func uniqueSlug(_ slug: String, used: inout Set<String>) -> String {
        var candidate = slug
        var number = 2
        while used.contains(candidate) {
            candidate = "\(slug)_\(number)"
            number += 1
        }
        used.insert(candidate)
        return candidate
    }

    /// The `outputSchema` of the item tools: the item itself (the ctxui item, inline).
    static let itemSchema: JSONValue = [
        "type": "object",
        "properties": [
            "id": ["type": "string"], "providerId": ["type": "string"], "type": ["type": "string"],
            "displayName": ["type": "string"], "content": [:], "createdAt": ["type": "string"],
        ],
        "required": ["id", "providerId", "type", "displayName", "content"],
    ]
}
