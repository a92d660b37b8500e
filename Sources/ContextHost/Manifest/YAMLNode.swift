import CYAML

/// A YAML node with its 1-based source position, built from libyaml's document (node) API.
///
/// Aliases are resolved (an alias becomes a copy of its anchored node), tags are kept when they are
/// explicit, and mappings keep their pairs in source order.
package struct YAMLNode: Sendable {
    /// How a scalar was written.
    package enum ScalarStyle: Sendable, Hashable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    /// One `key: value` pair of a mapping.
    package struct Pair: Sendable {
        package var key: YAMLNode
        package var value: YAMLNode
    }

    package enum Content: Sendable {
        case scalar(String, ScalarStyle)
        case sequence([YAMLNode])
        case mapping([Pair])
    }

    package var content: Content {
        didSet { resolved = YAMLNode.resolve(content, tag: tag) }
    }
    /// The explicit tag (`!!int`, `!custom`, expanded to its full form), or `nil` for the default tag.
    package var tag: String? {
        didSet { resolved = YAMLNode.resolve(content, tag: tag) }
    }
    /// The scalar's value, resolved once.
    private var resolved: YAMLScalarValue?
    /// 1-based line of the node's first character.
    package var line: Int
    /// 1-based column (in characters) of the node's first character.
    package var column: Int

    package init(_ content: Content, tag: String? = nil, line: Int, column: Int) {
        self.content = content
        self.tag = tag
        self.line = line
        self.column = column
        self.resolved = YAMLNode.resolve(content, tag: tag)
    }

    /// The scalar text, if this is a scalar.
    package var scalarText: String? {
        if case .scalar(let text, _) = content { return text }
        return nil
    }

    /// The mapping's pairs, if this is a mapping.
    package var pairs: [Pair]? {
        if case .mapping(let pairs) = content { return pairs }
        return nil
    }

    /// The sequence's items, if this is a sequence.
    package var items: [YAMLNode]? {
        if case .sequence(let items) = content { return items }
        return nil
    }

    /// The value for a scalar key `key` in a mapping.
    package subscript(key: String) -> YAMLNode? {
        pairs?.first { $0.key.scalarText == key }?.value
    }
}

/// The value of a scalar under the YAML 1.2 core schema.
package enum YAMLScalarValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case float(Double)
    case string(String)

    /// A short type name for messages ("string", "integer", …).
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .float: "number"
        case .string: "string"
        }
    }
}

extension YAMLNode {
    static let strTag = "tag:yaml.org,2002:str"

    /// The kind of node for messages: "string", "integer", "list", "mapping", ….
    package var kindName: String {
        switch content {
        case .scalar: scalarValue?.typeName ?? "scalar"
        case .sequence: "list"
        case .mapping: "mapping"
        }
    }

    /// The resolved value of a scalar (core schema for plain untagged scalars; quoted scalars are
    /// strings; explicit `!!str`, `!!int`, `!!float`, `!!bool`, `!!null` tags are honoured).
    package var scalarValue: YAMLScalarValue? { resolved }

    static func resolve(_ content: Content, tag: String?) -> YAMLScalarValue? {
        guard case .scalar(let text, let style) = content else { return nil }
        switch tag {
        case nil:
            return style == .plain ? YAMLNode.resolvePlain(text) : .string(text)
        case "tag:yaml.org,2002:str":
            return .string(text)
        case "tag:yaml.org,2002:int":
            if case .int(let v) = YAMLNode.resolvePlain(text) { return .int(v) }
            return .string(text)
        case "tag:yaml.org,2002:float":
            switch YAMLNode.resolvePlain(text) {
            case .int(let v): return .float(Double(v))
            case .float(let v): return .float(v)
            default: return .string(text)
            }
        case "tag:yaml.org,2002:bool":
            if case .bool(let v) = YAMLNode.resolvePlain(text) { return .bool(v) }
            return .string(text)
        case "tag:yaml.org,2002:null":
            return .null
        default:
            return .string(text)
        }
    }

    /// Core-schema resolution of a plain scalar.
    static func resolvePlain(_ text: String) -> YAMLScalarValue {
        // Fast path: most scalars start with a letter that cannot begin a null, bool or number.
        guard let lead = text.utf8.first else { return .null }
        switch lead {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "~"), UInt8(ascii: "n"), UInt8(ascii: "N"), UInt8(ascii: "t"), UInt8(ascii: "T"),
            UInt8(ascii: "f"), UInt8(ascii: "F"):
            break
        default:
            return .string(text)
        }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
        case ".nan", ".NaN", ".NAN": return .float(.nan)
        default: break
        }
        let utf8 = Array(text.utf8)
        guard let first = utf8.first else { return .string(text) }
        // Only something that starts like a number can be one.
        guard first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
            || (first >= 0x30 && first <= 0x39)
        else { return .string(text) }
        if utf8.count > 2, utf8[0] == UInt8(ascii: "0") {
            if utf8[1] == UInt8(ascii: "x"), let v = Int(String(text.dropFirst(2)), radix: 16),
                utf8.dropFirst(2).allSatisfy(\.isHexDigit)
            {
                return .int(v)
            }
            if utf8[1] == UInt8(ascii: "o"), let v = Int(String(text.dropFirst(2)), radix: 8),
                utf8.dropFirst(2).allSatisfy({ $0 >= 0x30 && $0 <= 0x37 })
            {
                return .int(v)
            }
        }
        if isCoreInt(utf8) {
            if let v = Int(text) { return .int(v) }
            if let v = Double(text) { return .float(v) }
        }
        if isCoreFloat(utf8), let v = Double(text) { return .float(v) }
        return .string(text)
    }

    /// `[-+]?[0-9]+`
    private static func isCoreInt(_ b: [UInt8]) -> Bool {
        var i = 0
        if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
        guard i < b.count else { return false }
        return b[i...].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
    private static func isCoreFloat(_ b: [UInt8]) -> Bool {
        var i = 0
        func digits() -> Int {
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            return i - start
        }
        if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
        let intDigits = digits()
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            let fraction = digits()
            if intDigits == 0, fraction == 0 { return false }
        } else if intDigits == 0 {
            return false
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
            if digits() == 0 { return false }
        }
        return i == b.count
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (self >= 0x30 && self <= 0x39) || (self >= 0x41 && self <= 0x46) || (self >= 0x61 && self <= 0x66)
    }
}

/// A problem found while reading YAML (syntax, several documents, duplicate keys, alias bombs).
package struct YAMLProblem: Sendable, Hashable {
    package var code: ManifestErrorCode
    package var line: Int
    package var column: Int
    package var message: String
    package var hint: String
    /// The field path of the mapping where the problem was found (for duplicate keys), if known.
    package var fieldPath: String
}

/// The result of reading one YAML document.
package struct YAMLDocument: Sendable {
    /// The root node, or `nil` if the stream is empty or could not be parsed.
    package var root: YAMLNode?
    /// Problems. A syntax problem leaves `root` nil; a duplicate key keeps the first value.
    package var problems: [YAMLProblem]
}

/// Reads YAML text with libyaml's document API into a `YAMLNode` tree.
package enum YAMLReader {
    /// Limits that protect against alias bombs ("billion laughs") and deep nesting.
    static let maximumNodeCount = 100_000
    static let maximumDepth = 256

    /// Parses one YAML document. More than one document in the stream is a problem.
    package static func read(_ bytes: [UInt8]) -> YAMLDocument {
        bytes.withUnsafeBufferPointer { buffer in
            read(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Parses one YAML document from UTF-8 (or UTF-16 with a BOM) bytes.
    package static func read(_ bytes: UnsafeRawBufferPointer) -> YAMLDocument {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            return YAMLDocument(root: nil, problems: [
                YAMLProblem(
                    code: .yamlSyntax, line: 1, column: 1, message: "could not initialise the YAML parser",
                    hint: "the host is out of memory", fieldPath: "")
            ])
        }
        defer { yaml_parser_delete(&parser) }
        // libyaml reads from the pointer during yaml_parser_load; `bytes` outlives this call.
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var empty: UInt8 = 0
        if let base {
            yaml_parser_set_input_string(&parser, base, bytes.count)
        } else {
            yaml_parser_set_input_string(&parser, &empty, 0)
        }

        var document = yaml_document_t()
        guard yaml_parser_load(&parser, &document) == 1 else {
            return YAMLDocument(root: nil, problems: [syntaxProblem(parser, bytes)])
        }
        var builder = TreeBuilder()
        var root: YAMLNode?
        if yaml_document_get_root_node(&document) != nil {
            root = builder.build(&document)
        }
        yaml_document_delete(&document)

        // A second document (or a syntax error after the first) is a problem too.
        var second = yaml_document_t()
        if yaml_parser_load(&parser, &second) == 1 {
            if let node = yaml_document_get_root_node(&second) {
                builder.problems.append(
                    YAMLProblem(
                        code: .multipleDocuments, line: Int(second.start_mark.line) + 1,
                        column: Int(second.start_mark.column) + 1,
                        message: "the file holds more than one YAML document",
                        hint: "a manifest is one document: remove the '---' separator and everything after it, "
                            + "or move the other document to its own file", fieldPath: ""))
                _ = node
            }
            yaml_document_delete(&second)
        } else {
            builder.problems.append(syntaxProblem(parser, bytes))
        }
        return YAMLDocument(root: root, problems: builder.problems)
    }

    private static func syntaxProblem(_ parser: yaml_parser_t, _ bytes: UnsafeRawBufferPointer) -> YAMLProblem {
        let problem = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
        var message = problem
        if let context = parser.context.map({ String(cString: $0) }) {
            message += " (\(context) at line \(parser.context_mark.line + 1), column \(parser.context_mark.column + 1))"
        }
        let line = Int(parser.problem_mark.line) + 1
        let column = Int(parser.problem_mark.column) + 1
        var hint = "fix the YAML syntax at this position; a manifest is a mapping of 'key: value' lines"
        if lineHasTab(bytes, line: line) {
            hint = "YAML does not allow tabs for indentation: indent with spaces"
        } else if parser.error == YAML_READER_ERROR {
            hint = "save the file as UTF-8"
        }
        return YAMLProblem(code: .yamlSyntax, line: line, column: column, message: message, hint: hint, fieldPath: "")
    }

    /// Whether the leading whitespace of 1-based `line` (or of the line before, where libyaml often
    /// reports a tab problem) contains a tab.
    private static func lineHasTab(_ bytes: UnsafeRawBufferPointer, line: Int) -> Bool {
        var current = 1
        var atLineStart = true
        for byte in bytes {
            if byte == 0x0A {
                if current >= line { return false }
                current += 1
                atLineStart = true
                continue
            }
            if current >= line - 1, atLineStart {
                if byte == 0x09 { return true }
                if byte != 0x20 { atLineStart = false }
            }
        }
        return false
    }

    /// Converts libyaml's node array into `YAMLNode`s, resolving aliases and checking keys.
    private struct TreeBuilder {
        var problems: [YAMLProblem] = []
        var nodeCount = 0
        /// Containers being converted (the current branch), to catch recursive aliases.
        var active: [Int32] = []
        var failed = false
        /// Where conversion is, as keys and indexes; turned into text only for a problem.
        var trail: [PathComponent] = []

        enum PathComponent {
            case key(String)
            case index(Int)
        }

        func pathText(appending key: String) -> String {
            var text = ""
            for component in trail {
                switch component {
                case .key(let k): text += text.isEmpty ? k : ".\(k)"
                case .index(let i): text += "[\(i)]"
                }
            }
            return text.isEmpty ? key : "\(text).\(key)"
        }

        mutating func build(_ document: inout yaml_document_t) -> YAMLNode? {
            let root = convert(&document, index: 1, depth: 0)
            return failed ? nil : root
        }

        private mutating func fail(_ node: UnsafeMutablePointer<yaml_node_t>, _ message: String, _ hint: String) {
            if !failed {
                problems.append(
                    YAMLProblem(
                        code: .yamlSyntax, line: Int(node.pointee.start_mark.line) + 1,
                        column: Int(node.pointee.start_mark.column) + 1, message: message, hint: hint, fieldPath: ""))
            }
            failed = true
        }

        private mutating func convert(_ document: inout yaml_document_t, index: Int32, depth: Int)
            -> YAMLNode?
        {
            guard !failed, let node = yaml_document_get_node(&document, index) else { return nil }
            nodeCount += 1
            if nodeCount > YAMLReader.maximumNodeCount {
                fail(node, "the document expands to more than \(YAMLReader.maximumNodeCount) nodes",
                    "aliases ('*name') expand their anchored node each time they are used; use fewer")
                return nil
            }
            if depth > YAMLReader.maximumDepth {
                fail(node, "the document nests deeper than \(YAMLReader.maximumDepth) levels", "flatten the structure")
                return nil
            }
            if active.contains(index) {
                fail(node, "an alias refers to a node that contains it", "remove the recursive alias")
                return nil
            }
            let line = Int(node.pointee.start_mark.line) + 1
            let column = Int(node.pointee.start_mark.column) + 1
            var tag: String? = node.pointee.tag.map { String(cString: $0) }
            // While a node is converted, an alias below it may not refer back to it (checked above).
            active.append(index)
            defer { active.removeLast() }
            switch node.pointee.type {
            case YAML_SCALAR_NODE:
                let scalar = node.pointee.data.scalar
                let text = String(
                    decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                let style: YAMLNode.ScalarStyle
                switch scalar.style {
                case YAML_SINGLE_QUOTED_SCALAR_STYLE: style = .singleQuoted
                case YAML_DOUBLE_QUOTED_SCALAR_STYLE: style = .doubleQuoted
                case YAML_LITERAL_SCALAR_STYLE: style = .literal
                case YAML_FOLDED_SCALAR_STYLE: style = .folded
                default: style = .plain
                }
                if tag == YAMLNode.strTag { tag = nil }
                return YAMLNode(.scalar(text, style), tag: tag, line: line, column: column)
            case YAML_SEQUENCE_NODE:
                if tag == "tag:yaml.org,2002:seq" { tag = nil }
                guard let items = convertSequence(&document, node, depth: depth) else { return nil }
                return YAMLNode(.sequence(items), tag: tag, line: line, column: column)
            case YAML_MAPPING_NODE:
                if tag == "tag:yaml.org,2002:map" { tag = nil }
                guard let pairs = convertMapping(&document, node, depth: depth) else { return nil }
                return YAMLNode(.mapping(pairs), tag: tag, line: line, column: column)
            default:
                return YAMLNode(.scalar("", .plain), line: line, column: column)
            }
        }

        /// A sequence node's items, converted; `nil` when one fails.
        private mutating func convertSequence(
            _ document: inout yaml_document_t, _ node: UnsafeMutablePointer<yaml_node_t>, depth: Int
        ) -> [YAMLNode]? {
            var items: [YAMLNode] = []
            var item = node.pointee.data.sequence.items.start
            let top = node.pointee.data.sequence.items.top
            var position = 0
            while let current = item, current != top {
                trail.append(.index(position))
                let converted = convert(&document, index: current.pointee, depth: depth + 1)
                trail.removeLast()
                guard let child = converted else { return nil }
                items.append(child)
                item = current + 1
                position += 1
            }
            return items
        }

        /// A mapping node's pairs, converted; a duplicate key is a problem and keeps the first
        /// pair. `nil` when a key or value fails.
        private mutating func convertMapping(
            _ document: inout yaml_document_t, _ node: UnsafeMutablePointer<yaml_node_t>, depth: Int
        ) -> [YAMLNode.Pair]? {
            var pairs: [YAMLNode.Pair] = []
            // Small mappings: a linear scan beats hashing. Large ones: an index.
            var keyIndex: [String: Int]?
            var pair = node.pointee.data.mapping.pairs.start
            let top = node.pointee.data.mapping.pairs.top
            while let current = pair, current != top {
                pair = current + 1
                guard let key = convert(&document, index: current.pointee.key, depth: depth + 1) else {
                    return nil
                }
                let keyText = key.scalarText
                if let keyText { trail.append(.key(keyText)) }
                let converted = convert(&document, index: current.pointee.value, depth: depth + 1)
                if keyText != nil { trail.removeLast() }
                guard let value = converted else { return nil }
                if let keyText {
                    let earlier: Int?
                    if let keyIndex {
                        earlier = keyIndex[keyText]
                    } else {
                        earlier = pairs.firstIndex { $0.key.scalarText == keyText }
                    }
                    if let earlier {
                        let first = pairs[earlier].key
                        problems.append(
                            YAMLProblem(
                                code: .duplicateKey, line: key.line, column: key.column,
                                message: "duplicate key '\(keyText)' (first defined at line \(first.line), "
                                    + "column \(first.column))",
                                hint: "remove one of the two '\(keyText)' entries",
                                fieldPath: pathText(appending: keyText)))
                        continue
                    }
                    if keyIndex != nil {
                        keyIndex![keyText] = pairs.count
                    } else if pairs.count == 16 {
                        var built: [String: Int] = [:]
                        for (position, existing) in pairs.enumerated() {
                            if let text = existing.key.scalarText, built[text] == nil { built[text] = position }
                        }
                        built[keyText] = pairs.count
                        keyIndex = built
                    }
                }
                pairs.append(YAMLNode.Pair(key: key, value: value))
            }
            return pairs
        }
    }
}
