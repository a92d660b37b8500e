/// A small, bounded XML reader for WebDAV/CalDAV answers (`multistatus`).
///
/// Every byte comes from a server we do not control, so the reader:
/// - refuses any document type declaration (`<!DOCTYPE`): no entity can be declared, so there
///   is no external entity (XXE) and no entity expansion (billion laughs);
/// - knows only the five predefined entities and character references (valid Unicode scalars);
/// - caps the input size, the element depth, the number of elements and attributes, and a
///   name's length, and never recurses (an explicit stack; `XMLNode` trees are at most
///   `maximumDepth` deep, so even their release is bounded);
/// - resolves namespace prefixes (`xmlns`, `xmlns:d`) per scope; an undeclared prefix is an error.
///
/// What it keeps: elements (namespace URI and local name), their attributes, children and text
/// (character data and CDATA, concatenated). Comments and processing instructions are skipped.
struct XMLNode: Sendable, Equatable {
    var namespace: String
    var name: String
    var children: [XMLNode] = []
    var text: String = ""
    /// Attributes other than namespace declarations, by the name as written (`name`, `x:y`).
    var attributes: [String: String] = [:]

    /// The first child with this namespace and name.
    func child(_ namespace: String, _ name: String) -> XMLNode? {
        children.first { $0.name == name && $0.namespace == namespace }
    }

    /// Every child with this namespace and name.
    func children(_ namespace: String, _ name: String) -> [XMLNode] {
        children.filter { $0.name == name && $0.namespace == namespace }
    }

    /// The text with surrounding white space removed.
    var trimmedText: String { Self.trimmed(text) }

    /// `text` without leading and trailing white space (spaces, tabs, line ends).
    static func trimmed(_ text: String) -> String {
        var view = Substring(text)
        while let first = view.first, first.isWhitespace { view.removeFirst() }
        while let last = view.last, last.isWhitespace { view.removeLast() }
        return String(view)
    }
}

/// Why an XML document was refused (`offset`: the byte where it went wrong).
struct XMLError: Error, Sendable, Equatable, CustomStringConvertible {
    var offset: Int
    var reason: String
    var description: String { "\(reason) (at byte \(offset))" }
}

enum XMLReader {
    /// Caps on what one document may contain.
    struct Limits: Sendable {
        var maximumBytes = 64 << 20
        var maximumDepth = 48
        var maximumElements = 2_000_000
        var maximumAttributes = 64
        var maximumNameBytes = 256
    }

    /// Reads a whole document; returns its root element.
    static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(XMLError) -> XMLNode {
        guard bytes.count <= limits.maximumBytes else {
            throw XMLError(offset: 0, reason: "the answer is \(bytes.count) bytes; at most \(limits.maximumBytes) are read")
        }
        var parser = Parser(bytes: bytes, limits: limits)
        return try parser.document()
    }

    private struct Frame {
        var node: XMLNode
        var rawName: [UInt8]
        /// Namespace declarations made on this element (prefix → URI; "" is the default).
        var declarations: [(prefix: [UInt8], uri: String)]
    }

    private struct Parser {
        let bytes: [UInt8]
        let limits: Limits
        var index = 0
        var stack: [Frame] = []
        var elements = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
        }

        func fail(_ reason: String) -> XMLError { XMLError(offset: index, reason: reason) }

        func peek(_ offset: Int = 0) -> UInt8? {
            let position = index &+ offset
            return position >= 0 && position < bytes.count ? bytes[position] : nil
        }

        func starts(with literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard count <= bytes.count - index else { return false }
            return literal.withUTF8Buffer { buffer in
                for i in 0..<count where bytes[index + i] != buffer[i] { return false }
                return true
            }
        }

        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        mutating func skipSpace() {
            while let byte = peek(), Self.isSpace(byte) { index += 1 }
        }

        /// Skips to just after `terminator`; fails at the end of the input.
        mutating func skip(past terminator: StaticString, what: String) throws(XMLError) {
            let count = terminator.utf8CodeUnitCount
            while index < bytes.count {
                if starts(with: terminator) {
                    index += count
                    return
                }
                index += 1
            }
            throw fail("\(what) is not closed")
        }

        mutating func document() throws(XMLError) -> XMLNode {
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
            var root: XMLNode?
            while true {
                skipSpace()
                guard index < bytes.count else { break }
                if starts(with: "<?") {
                    try skip(past: "?>", what: "a processing instruction")
                } else if starts(with: "<!--") {
                    try skip(past: "-->", what: "a comment")
                } else if starts(with: "<!") {
                    throw fail("document type declarations (<!DOCTYPE) are not accepted in a server answer")
                } else if peek() == UInt8(ascii: "<") {
                    guard root == nil else { throw fail("a second root element") }
                    root = try element()
                } else {
                    throw fail("text outside the root element")
                }
            }
            guard let root else { throw fail("no root element") }
            return root
        }

        /// Reads one element (the root) and everything inside it, without recursion.
        mutating func element() throws(XMLError) -> XMLNode {
            try openTag()
            if let finished = try closeIfEmpty() { return finished }
            var text: [UInt8] = []
            while true {
                guard index < bytes.count else { throw fail("the answer ends inside <\(currentName)>") }
                let byte = bytes[index]
                if byte == UInt8(ascii: "<") {
                    if starts(with: "</") {
                        appendText(&text)
                        if let done = try closeTag() { return done }
                    } else if starts(with: "<!--") {
                        try skip(past: "-->", what: "a comment")
                    } else if starts(with: "<![CDATA[") {
                        index += 9
                        let start = index
                        try skip(past: "]]>", what: "a CDATA section")
                        text.append(contentsOf: bytes[start..<(index - 3)])
                    } else if starts(with: "<!") {
                        throw fail("declarations (<!…) are not accepted inside an element")
                    } else if starts(with: "<?") {
                        try skip(past: "?>", what: "a processing instruction")
                    } else {
                        appendText(&text)
                        try openTag()
                        if let finished = try closeIfEmpty() {
                            // An empty root cannot happen here: the stack still holds the parent.
                            _ = finished
                        }
                    }
                } else if byte == UInt8(ascii: "&") {
                    try reference(into: &text)
                } else {
                    text.append(byte)
                    index += 1
                }
            }
        }

        var currentName: String { stack.last.map { String(decoding: $0.rawName, as: UTF8.self) } ?? "" }

        mutating func appendText(_ text: inout [UInt8]) {
            guard !text.isEmpty, !stack.isEmpty else {
                text.removeAll(keepingCapacity: true)
                return
            }
            stack[stack.count - 1].node.text += String(decoding: text, as: UTF8.self)
            text.removeAll(keepingCapacity: true)
        }

        mutating func name() throws(XMLError) -> [UInt8] {
            let start = index
            while let byte = peek(), !Self.isSpace(byte), byte != UInt8(ascii: ">"), byte != UInt8(ascii: "/"),
                byte != UInt8(ascii: "="), byte != UInt8(ascii: "<")
            {
                index += 1
                guard index - start <= limits.maximumNameBytes else {
                    throw fail("a name longer than \(limits.maximumNameBytes) bytes")
                }
            }
            guard index > start else { throw fail("a name is missing") }
            return Array(bytes[start..<index])
        }

        /// `<name attr="v" …` up to (not including) `>` or `/>`; pushes a frame.
        mutating func openTag() throws(XMLError) {
            guard stack.count < limits.maximumDepth else {
                throw fail("elements are nested more than \(limits.maximumDepth) deep")
            }
            elements += 1
            guard elements <= limits.maximumElements else {
                throw fail("more than \(limits.maximumElements) elements")
            }
            index += 1  // <
            let rawName = try name()
            var declarations: [(prefix: [UInt8], uri: String)] = []
            var attributeValues: [String: String] = [:]
            var attributes = 0
            while true {
                skipSpace()
                guard let byte = peek() else { throw fail("the answer ends inside a tag") }
                if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") { break }
                attributes += 1
                guard attributes <= limits.maximumAttributes else {
                    throw fail("more than \(limits.maximumAttributes) attributes on one element")
                }
                let attribute = try name()
                skipSpace()
                guard peek() == UInt8(ascii: "=") else { throw fail("an attribute without a value") }
                index += 1
                skipSpace()
                guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                    throw fail("an attribute value is not quoted")
                }
                index += 1
                var value: [UInt8] = []
                while true {
                    guard let byte = peek() else { throw fail("an attribute value is not closed") }
                    if byte == quote { break }
                    if byte == UInt8(ascii: "<") { throw fail("< inside an attribute value") }
                    if byte == UInt8(ascii: "&") {
                        try reference(into: &value)
                    } else {
                        value.append(byte)
                        index += 1
                    }
                }
                index += 1
                if attribute == Array("xmlns".utf8) {
                    declarations.append(([], String(decoding: value, as: UTF8.self)))
                } else if attribute.count > 6, attribute.starts(with: "xmlns:".utf8) {
                    declarations.append((Array(attribute[6...]), String(decoding: value, as: UTF8.self)))
                } else {
                    attributeValues[String(decoding: attribute, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
                }
            }
            stack.append(
                Frame(
                    node: XMLNode(namespace: "", name: "", attributes: attributeValues), rawName: rawName,
                    declarations: declarations))
            let (namespace, local) = try resolve(rawName)
            stack[stack.count - 1].node.namespace = namespace
            stack[stack.count - 1].node.name = local
        }

        /// After `openTag`: `/>` closes the element at once (returned when it was the root).
        mutating func closeIfEmpty() throws(XMLError) -> XMLNode? {
            if peek() == UInt8(ascii: "/") {
                guard peek(1) == UInt8(ascii: ">") else { throw fail("/ not followed by >") }
                index += 2
                return pop()
            }
            index += 1  // >
            return nil
        }

        /// `</name>`; returns the root when it was closed.
        mutating func closeTag() throws(XMLError) -> XMLNode? {
            index += 2
            let rawName = try name()
            skipSpace()
            guard peek() == UInt8(ascii: ">") else { throw fail("an end tag is not closed") }
            index += 1
            guard let frame = stack.last, frame.rawName == rawName else {
                throw fail("</\(String(decoding: rawName, as: UTF8.self))> does not close <\(currentName)>")
            }
            return pop()
        }

        /// Closes the innermost element: appends it to its parent, or returns it when it is the root.
        mutating func pop() -> XMLNode? {
            guard let frame = stack.popLast() else { return nil }
            if stack.isEmpty { return frame.node }
            stack[stack.count - 1].node.children.append(frame.node)
            return nil
        }

        /// The namespace URI and local name of `prefix:local` in the current scope.
        func resolve(_ rawName: [UInt8]) throws(XMLError) -> (String, String) {
            let colon = rawName.firstIndex(of: UInt8(ascii: ":"))
            let prefix = colon.map { Array(rawName[..<$0]) } ?? []
            let local = colon.map { Array(rawName[($0 + 1)...]) } ?? rawName
            guard !local.isEmpty else { throw fail("an element name ends with ':'") }
            for frame in stack.reversed() {
                for declaration in frame.declarations.reversed() where declaration.prefix == prefix {
                    return (declaration.uri, String(decoding: local, as: UTF8.self))
                }
            }
            if prefix.isEmpty { return ("", String(decoding: local, as: UTF8.self)) }
            throw fail("the prefix \"\(String(decoding: prefix, as: UTF8.self))\" is not declared")
        }

        /// `&name;` or `&#…;` at `index`: appends the character.
        mutating func reference(into output: inout [UInt8]) throws(XMLError) {
            let start = index
            index += 1
            var body: [UInt8] = []
            while let byte = peek(), byte != UInt8(ascii: ";") {
                body.append(byte)
                index += 1
                guard body.count <= 12 else {
                    index = start
                    throw fail("an entity reference that is too long or not closed by ;")
                }
            }
            guard peek() == UInt8(ascii: ";") else {
                index = start
                throw fail("an entity reference is not closed by ;")
            }
            index += 1
            switch body {
            case Array("lt".utf8): output.append(UInt8(ascii: "<"))
            case Array("gt".utf8): output.append(UInt8(ascii: ">"))
            case Array("amp".utf8): output.append(UInt8(ascii: "&"))
            case Array("quot".utf8): output.append(UInt8(ascii: "\""))
            case Array("apos".utf8): output.append(UInt8(ascii: "'"))
            default:
                guard body.first == UInt8(ascii: "#") else {
                    index = start
                    throw fail("the entity &\(String(decoding: body, as: UTF8.self)); is not one of XML's five (no entities are declared)")
                }
                var value: UInt32 = 0
                let hex = body.count > 1 && (body[1] == UInt8(ascii: "x"))
                let digits = body.dropFirst(hex ? 2 : 1)
                guard !digits.isEmpty else {
                    index = start
                    throw fail("an empty character reference")
                }
                for digit in digits {
                    let d: UInt32
                    switch digit {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(digit - UInt8(ascii: "0"))
                    case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: d = UInt32(digit - UInt8(ascii: "a") + 10)
                    case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: d = UInt32(digit - UInt8(ascii: "A") + 10)
                    default:
                        index = start
                        throw fail("a character reference with a bad digit")
                    }
                    let (product, overflow) = value.multipliedReportingOverflow(by: hex ? 16 : 10)
                    guard !overflow, product <= 0x10FFFF else {
                        index = start
                        throw fail("a character reference beyond Unicode")
                    }
                    value = product + d
                }
                guard value != 0, let scalar = Unicode.Scalar(value) else {
                    index = start
                    throw fail("a character reference to U+0000 or a surrogate")
                }
                output.append(contentsOf: String(Character(scalar)).utf8)
            }
        }
    }
}
