import ContextProviderKit
import ContextProtocol

/// The `context-host compose` flow: pick providers, fill their forms, see attached items as
/// chips, open an item's detail, remove items, and send. It speaks only the public protocol
/// (docs/protocol.md) through a ``BlockingHost`` and draws through a ``ComposeTerminal``.
package final class ComposeApp {
    private let host: BlockingHost
    private let terminal: ComposeTerminal
    private let grantedPermissions: [String]
    private var composerId: JSONValue = .null
    private var status: [String] = []
    /// Labels of options picked by search, by field id, to show instead of their values.
    private var pickedLabels: [String: String] = [:]

    package init(host: BlockingHost, terminal: ComposeTerminal, grantedPermissions: [String]) {
        self.host = host
        self.terminal = terminal
        self.grantedPermissions = grantedPermissions
    }

    private var width: Int { terminal.width }
    private var color: Bool { terminal.color }

    /// Runs until the user sends (returns the envelope) or quits (returns nil).
    package func run() throws(ResponseError) -> JSONValue? {
        try host.call(InitializeRequest.method, [
            "clientInfo": ["name": "context-host compose", "version": "1.0"],
            "protocolVersion": 1, "locale": "en-US",
            "grantedPermissions": .array(grantedPermissions.map(JSONValue.string)),
        ])
        host.notify(ContextProtocol.InitializedNotification.method)
        composerId = try host.call(ComposerOpenRequest.method)["composerId"] ?? .null
        while true {
            let items = try attachedItems()
            var screen = header(items)
            screen += status
            status = []
            terminal.show(screen)
            let hasItems = !items.isEmpty
            let options = [
                MenuOption("Attach context…"),
                MenuOption("Open an item", enabled: hasItems, note: hasItems ? nil : "nothing attached"),
                MenuOption("Remove an item", enabled: hasItems, note: hasItems ? nil : "nothing attached"),
                MenuOption("Send"),
                MenuOption("Quit"),
            ]
            guard let choice = terminal.menu("What next?", options) else {
                if terminal.inputEnded { return nil }
                continue
            }
            switch choice {
            case 0: try attach()
            case 1: try open(items)
            case 2: try remove(items)
            case 3: if let envelope = try send() { return envelope }
            default:
                _ = try? host.call(ComposerCloseRequest.method, ["composerId": composerId])
                return nil
            }
        }
    }

    // MARK: Screens

    private func header(_ items: [JSONValue]) -> [String] {
        var lines = [CtxuiRender.styled("context-host compose", [.bold], color: color)]
        lines.append("Attached (\(items.count)):")
        lines += CtxuiRender.render(chips: items.map { $0["chip"] ?? .null }, width: width - 2, color: color).map { "  " + $0 }
        lines.append("")
        return lines
    }

    private func attachedItems() throws(ResponseError) -> [JSONValue] {
        try host.call(ComposerListRequest.method, ["composerId": composerId])["items"]?.arrayValue ?? []
    }

    private func report(_ error: ResponseError) {
        status += CtxuiRender.wrap("✗ " + error.message, width: width).map { CtxuiRender.styled($0, [.red], color: color) }
    }

    // MARK: Attach

    private func attach() throws(ResponseError) {
        let providers = try host.call(ProvidersListRequest.method, ["composerId": composerId])["providers"]?.arrayValue ?? []
        let lines = providers.map(CtxuiRender.providerLine)
        var options = lines.map { MenuOption($0.label, enabled: $0.enabled, note: $0.note) }
        options.append(MenuOption("(back)"))
        terminal.show(header(try attachedItems()))
        guard let choice = terminal.menu("Attach context — pick a provider:", options), choice < providers.count else { return }
        let provider = providers[choice]
        let providerId = provider["id"] ?? .null
        if provider["collection"]?.stringValue == "programmatic" {
            do {
                let made = try host.call(CollectMakeRequest.method, ["providerId": providerId, "composerId": composerId])
                status.append(made["item"]?.isNull == false ? "Attached \(made["item"]?["displayName"]?.stringValue ?? "an item")." : "\(lines[choice].label) made nothing.")
            } catch { report(error) }
            return
        }
        let started: JSONValue
        do {
            started = try host.call(CollectStartRequest.method, ["providerId": providerId, "composerId": composerId])
        } catch {
            report(error)
            return
        }
        let sessionId = started["sessionId"] ?? .null
        var form = started["form"] ?? .null
        var values: JSONObject = [:]
        var fieldErrors: [String: String] = [:]
        var formError: String?
        var toAsk: [JSONValue]? = nil  // nil: every field
        while true {
            let fields = form["fields"]?.arrayValue ?? []
            let asked = toAsk ?? fields
            for field in asked {
                guard let value = ask(field, form: form, values: values, errors: fieldErrors, formError: formError, sessionId: sessionId) else {
                    _ = try? host.call(CollectCancelRequest.method, ["sessionId": sessionId])
                    status.append("Cancelled.")
                    return
                }
                let id = field["id"]?.stringValue ?? ""
                values[id] = value.isNull ? nil : value
            }
            let outcome: JSONValue
            do {
                outcome = try host.call(CollectSubmitRequest.method, ["sessionId": sessionId, "values": .object(values)])
            } catch {
                report(error)
                if [-32030, -32031, -32020].contains(error.code.rawValue) { return }
                toAsk = fields
                continue
            }
            switch outcome["outcome"]?.stringValue {
            case "item":
                status.append("Attached “\(outcome["item"]?["displayName"]?.stringValue ?? "item")”.")
                return
            case "step":
                form = outcome["form"] ?? .null
                values = [:]
                fieldErrors = [:]
                formError = nil
                toAsk = nil
            default:
                fieldErrors = [:]
                for (key, message) in outcome["fieldErrors"]?.objectValue ?? [:] { fieldErrors[key] = message.stringValue ?? message.jsonString }
                formError = outcome["formError"]?.stringValue
                let wrong = fields.filter { fieldErrors[$0["id"]?.stringValue ?? ""] != nil }
                toAsk = wrong.isEmpty ? fields : wrong
            }
        }
    }

    /// The form as it stands, with errors inline, then the question for one field.
    private func formScreen(_ form: JSONValue, values: JSONObject, errors: [String: String], formError: String?, current: String) -> [String] {
        var lines = CtxuiRender.render(formHeader: form, formError: formError, width: width, color: color)
        for field in form["fields"]?.arrayValue ?? [] {
            let id = field["id"]?.stringValue ?? ""
            let marker = id == current ? "▸ " : "  "
            lines += CtxuiRender.render(field: field, value: values[id], error: errors[id], width: width - 2, color: color,
                                        valueLabel: values[id]?.stringValue.flatMap { pickedLabels[id + "\u{0}" + $0] })
                .enumerated().map { index, line in (index == 0 ? marker : "  ") + line }
        }
        lines.append("")
        return lines
    }

    /// Asks one field; `.null` leaves it out, nil cancels the form.
    private func ask(_ field: JSONValue, form: JSONValue, values: JSONObject, errors: [String: String], formError: String?, sessionId: JSONValue) -> JSONValue? {
        let id = field["id"]?.stringValue ?? ""
        let label = field["label"]?.stringValue ?? id
        let screen = formScreen(form, values: values, errors: errors, formError: formError, current: id)
        terminal.show(screen)
        let defaultValue = values[id] ?? field["default"]
        switch field["kind"]?.stringValue {
        case "choice":
            if let search = field["search"] {
                let minimum = search["minQueryLength"]?.intValue ?? 0
                var currentValues = values
                currentValues[id] = nil
                var labels: [String: String] = [:]
                let picked = terminal.searchChoice(label, minimumQueryLength: minimum) { query in
                    let result = try? host.call(CollectQueryRequest.method, ["sessionId": sessionId, "fieldId": .string(id), "query": .string(query), "values": .object(currentValues)])
                    return (result?["options"]?.arrayValue ?? []).compactMap { option in
                        guard let value = option["value"]?.stringValue else { return nil }
                        let optionLabel = option["label"]?.stringValue ?? value
                        labels[value] = optionLabel
                        return (value, MenuOption(optionLabel, note: option["detail"]?.stringValue))
                    }
                }
                if case .picked(let value) = picked, let optionLabel = labels[value] { pickedLabels[id + "\u{0}" + value] = optionLabel }
                switch picked {
                case .picked(let value): return .string(value)
                case .skipped: return .null
                case .cancelled: return nil
                }
            }
            let choices = field["options"]?.arrayValue ?? []
            var options = choices.map { MenuOption($0["label"]?.stringValue ?? $0["value"]?.stringValue ?? "?", note: $0["detail"]?.stringValue) }
            let required = field["required"]?.boolValue == true
            if !required { options.append(MenuOption("(none)")) }
            let preselected = defaultValue.flatMap { value in choices.firstIndex { $0["value"] == value } }
            guard let index = terminal.menu(label + ":", options, preselected: preselected) else { return nil }
            return index < choices.count ? (choices[index]["value"] ?? .null) : .null
        case "toggle":
            let preselected = defaultValue?.boolValue.map { $0 ? 0 : 1 }
            guard let index = terminal.menu(label + ":", [MenuOption("yes"), MenuOption("no")], preselected: preselected) else { return nil }
            return .bool(index == 0)
        case "text" where field["multiline"]?.boolValue == true:
            var lines: [String] = []
            while true {
                if terminal.redraws { terminal.show(screen + lines.map { "  │ " + $0 }) }
                guard let line = terminal.readLine(label + (lines.isEmpty ? " (end with '.')" : ""), initial: "") else { return nil }
                if line == "." { break }
                lines.append(line)
            }
            if lines.isEmpty, let defaultValue, values[id] != nil { return defaultValue }
            return .string(lines.joined(separator: "\n"))
        default:
            let initial = defaultValue.flatMap { CtxuiRender.displayValue($0, field: field) } ?? ""
            guard let answer = terminal.readLine(label, initial: initial) else { return nil }
            if answer.isEmpty, field["kind"]?.stringValue != "text", let defaultValue { return defaultValue }
            return CtxuiRender.parseValue(answer, field: field) ?? .null
        }
    }

    // MARK: Items

    private func pickItem(_ items: [JSONValue], title: String) -> JSONValue? {
        var options = items.map { MenuOption(CtxuiRender.render(chip: $0["chip"] ?? .null, width: width - 8, color: color)) }
        options.append(MenuOption("(back)"))
        guard let index = terminal.menu(title, options), index < items.count else { return nil }
        return items[index]
    }

    private func open(_ items: [JSONValue]) throws(ResponseError) {
        terminal.show(header(items))
        guard let entry = pickItem(items, title: "Open which item?"), let item = entry["item"] else { return }
        var lines: [String]
        do {
            let detail = try host.call(ItemsDetailRequest.method, ["item": item])
            lines = CtxuiRender.render(detail: detail, width: width, color: color)
        } catch {
            lines = [CtxuiRender.styled("✗ " + error.message, [.red], color: color), item["displayName"]?.stringValue ?? ""]
        }
        if let description = try? host.call(ItemsDescribeRequest.method, ["item": item])["text"]?.stringValue {
            lines += [""] + CtxuiRender.wrap(description, width: width).map { CtxuiRender.styled($0, [.dim], color: color) }
        }
        terminal.show(lines + [""])
        _ = terminal.pause("Back to the message")
    }

    private func remove(_ items: [JSONValue]) throws(ResponseError) {
        terminal.show(header(items))
        guard let entry = pickItem(items, title: "Remove which item?"), let itemId = entry["item"]?["id"] else { return }
        do {
            let removed = try host.call(ComposerRemoveRequest.method, ["composerId": composerId, "itemId": itemId])
            status.append("Removed “\(removed["removed"]?["displayName"]?.stringValue ?? "item")”.")
        } catch { report(error) }
    }

    private func send() throws(ResponseError) -> JSONValue? {
        terminal.show(header(try attachedItems()))
        guard let text = terminal.readLine("Message", initial: "") else { return nil }
        do {
            return try host.call(ComposerSendRequest.method, ["composerId": composerId, "text": .string(text)])
        } catch {
            report(error)
            return nil
        }
    }
}
