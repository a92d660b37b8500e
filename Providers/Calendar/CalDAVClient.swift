import ContextProviderKit

/// What went wrong talking to a CalDAV server: what, where (the URL, never a password or
/// header), and how to fix it.
enum CalDAVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request did not get an answer (no route, refused, timed out, no broker).
    case transport(String, hint: String)
    /// 401/403: the user name or password is wrong, or the user may not read this.
    case unauthorized(url: String, user: String, status: Int)
    /// Any other unexpected HTTP status.
    case status(url: String, method: String, status: Int)
    /// An answer we could not read.
    case badAnswer(url: String, reason: String)
    /// Discovery found nothing to read.
    case notFound(String, hint: String)

    var message: String {
        switch self {
        case .transport(let message, _): "CalDAV: \(message)"
        case .unauthorized(let url, let user, let status):
            "The CalDAV server refused the user name or password for \"\(user)\" (HTTP \(status)) at \(url)"
        case .status(let url, let method, let status): "CalDAV \(method) \(url) answered HTTP \(status)"
        case .badAnswer(let url, let reason): "CalDAV answer from \(url) could not be read: \(reason)"
        case .notFound(let message, _): "CalDAV: \(message)"
        }
    }

    var hint: String {
        switch self {
        case .transport(_, let hint), .notFound(_, let hint): hint
        case .unauthorized:
            "check the caldavUser setting and the caldavPassword secret of com.contexthost.calendar (context-host secrets set com.contexthost.calendar caldavPassword; for iCloud, Fastmail and Google use an app-specific password)"
        case .status:
            "check the caldavURL setting (the server's address or your calendar home), and that the server is a CalDAV server"
        case .badAnswer: "the server sent something that is not a WebDAV answer; check the caldavURL setting"
        }
    }

    var description: String { "\(message); \(hint)" }
}

/// One calendar collection found on the server.
struct CalDAVCalendarInfo: Sendable, Equatable {
    var href: String
    var displayName: String
    /// `VEVENT`, `VTODO`, …; empty when the server did not say (then every component may occur).
    var components: [String]
    var syncToken: String?
    var ctag: String?
}

/// A WebDAV `response` of a multistatus answer.
struct DAVResponse: Sendable {
    var href: String
    /// The response-level status (`sync-collection` reports removed members with 404).
    var status: Int?
    /// Properties found with status 200, by (namespace, name).
    var properties: [XMLNode]

    func property(_ namespace: String, _ name: String) -> XMLNode? {
        properties.first { $0.namespace == namespace && $0.name == name }
    }
}

/// A multistatus answer.
struct Multistatus: Sendable {
    var responses: [DAVResponse]
    var syncToken: String?

    static let dav = "DAV:"
    static let caldav = "urn:ietf:params:xml:ns:caldav"
    static let calendarServer = "http://calendarserver.org/ns/"

    /// `HTTP/1.1 200 OK` → 200.
    static func statusCode(_ line: String) -> Int? {
        let parts = XMLNode.trimmed(line).split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].utf8.count == 3 else { return nil }
        return Int(parts[1])
    }

    init(_ root: XMLNode) throws(XMLError) {
        guard root.namespace == Self.dav, root.name == "multistatus" else {
            throw XMLError(offset: 0, reason: "the root element is <\(root.name)>, not DAV: multistatus")
        }
        syncToken = root.child(Self.dav, "sync-token")?.trimmedText
        responses = root.children(Self.dav, "response").compactMap { response in
            guard let href = response.child(Self.dav, "href")?.trimmedText, !href.isEmpty else { return nil }
            var properties: [XMLNode] = []
            for propstat in response.children(Self.dav, "propstat") {
                let status = propstat.child(Self.dav, "status").flatMap { Self.statusCode($0.text) } ?? 200
                guard status == 200, let prop = propstat.child(Self.dav, "prop") else { continue }
                properties.append(contentsOf: prop.children)
            }
            return DAVResponse(
                href: href, status: response.child(Self.dav, "status").flatMap { Self.statusCode($0.text) },
                properties: properties)
        }
    }
}

/// The CalDAV protocol over a `CalDAVTransport`: discovery (RFC 6764, RFC 5397
/// `current-user-principal`, RFC 4791 `calendar-home-set`), the calendar list, `calendar-query`
/// with a time range, `calendar-multiget` and `sync-collection` (RFC 6578).
struct CalDAVClient: Sendable {
    let transport: any CalDAVTransport
    /// Shown in errors (never the password).
    let user: String
    /// Seconds a request may take.
    var timeoutSeconds = 30.0
    /// The most redirects followed for one request.
    static let maximumRedirects = 5
    /// hrefs per `calendar-multiget`.
    static let multigetBatch = 500
    /// The largest answer read (a multiget of 500 events is a few MB).
    static let maximumAnswerBytes = 64 << 20

    /// Sends one request, following same-origin redirects; answers 2xx (and 207).
    func send(_ method: String, _ url: DAVURL, depth: String?, body: String?) async throws(CalDAVError) -> (DAVURL, CalDAVResponse) {
        var current = url
        for _ in 0...Self.maximumRedirects {
            var headers: [String: String] = [:]
            if let depth { headers["Depth"] = depth }
            if body != nil { headers["Content-Type"] = "application/xml; charset=utf-8" }
            let request = CalDAVRequest(
                method: method, url: current.string, headers: headers, body: body.map { Array($0.utf8) },
                timeoutSeconds: timeoutSeconds)
            let response: CalDAVResponse
            do {
                response = try await transport.send(request)
            } catch let error as CalDAVError {
                throw error
            } catch {
                throw .transport(
                    "cannot reach \(current.origin) (\(error))",
                    hint: "check the network and the caldavURL setting; the cached copy is shown meanwhile")
            }
            switch response.status {
            case 200...299:
                guard response.body.count <= Self.maximumAnswerBytes else {
                    throw .badAnswer(url: current.string, reason: "the answer is over \(Self.maximumAnswerBytes >> 20) MB")
                }
                return (current, response)
            case 301, 302, 303, 307, 308:
                guard let location = response.headers["location"], let next = current.resolve(location) else {
                    throw .badAnswer(
                        url: current.string, reason: "a redirect (HTTP \(response.status)) without a Location on the same server")
                }
                current = next
            case 403 where response.body.count < 4096 && CalendarStore.contains(response.body, Array("valid-sync-token".utf8)):
                // RFC 6578 §3.2: the sync token is no longer valid (the caller starts over).
                throw .status(url: current.string, method: method, status: 403)
            case 401, 403:
                throw .unauthorized(url: current.string, user: user, status: response.status)
            default:
                throw .status(url: current.string, method: method, status: response.status)
            }
        }
        throw .badAnswer(url: url.string, reason: "more than \(Self.maximumRedirects) redirects")
    }

    /// Sends a PROPFIND/REPORT and reads its multistatus answer.
    func multistatus(_ method: String, _ url: DAVURL, depth: String?, body: String) async throws(CalDAVError) -> (DAVURL, Multistatus) {
        let (final, response) = try await send(method, url, depth: depth, body: body)
        do throws(XMLError) {
            return (final, try Multistatus(try XMLReader.parse(response.body)))
        } catch {
            throw .badAnswer(url: final.string, reason: error.description)
        }
    }

    static func propfind(_ props: String) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/"><d:prop>\(props)</d:prop></d:propfind>
        """
    }

    /// The user's calendar home: the configured URL (or, for a bare server address,
    /// `/.well-known/caldav` first) → `current-user-principal` → `calendar-home-set`. A URL that
    /// has no principal but is itself a calendar home or calendar is used as it is.
    func discoverHome(_ configured: DAVURL) async throws(CalDAVError) -> DAVURL {
        var starts: [DAVURL] = []
        var wellKnown = configured
        wellKnown.path = "/.well-known/caldav"
        if configured.path == "/" { starts = [wellKnown, configured] } else { starts = [configured, wellKnown] }
        var lastError: CalDAVError?
        for start in starts {
            do throws(CalDAVError) {
                let (final, answer) = try await multistatus(
                    "PROPFIND", start, depth: "0",
                    body: Self.propfind("<d:current-user-principal/><c:calendar-home-set/><d:resourcetype/>"))
                let response = answer.responses.first
                if let home = response?.property(Multistatus.caldav, "calendar-home-set")?.child(Multistatus.dav, "href"),
                    let url = final.resolve(home.trimmedText)
                {
                    return url
                }
                if let principal = response?.property(Multistatus.dav, "current-user-principal")?.child(Multistatus.dav, "href"),
                    let principalURL = final.resolve(principal.trimmedText)
                {
                    let (principalFinal, principalAnswer) = try await multistatus(
                        "PROPFIND", principalURL, depth: "0", body: Self.propfind("<c:calendar-home-set/>"))
                    if let home = principalAnswer.responses.first?.property(Multistatus.caldav, "calendar-home-set")?
                        .child(Multistatus.dav, "href"),
                        let url = principalFinal.resolve(home.trimmedText)
                    {
                        return url
                    }
                    throw CalDAVError.notFound(
                        "the principal \(principalURL.string) has no calendar-home-set",
                        hint: "set caldavURL to your calendar home (e.g. https://server/calendars/you/)")
                }
                if start == configured { return final }
            } catch {
                if case .unauthorized = error { throw error }
                lastError = error
            }
        }
        throw lastError
            ?? .notFound(
                "no calendar home found at \(configured.string)",
                hint: "set caldavURL to your server's CalDAV address or your calendar home")
    }

    /// The calendars in a home (PROPFIND Depth 1) that can hold events.
    func calendars(in home: DAVURL) async throws(CalDAVError) -> [CalDAVCalendarInfo] {
        let (final, answer) = try await multistatus(
            "PROPFIND", home, depth: "1",
            body: Self.propfind(
                "<d:resourcetype/><d:displayname/><c:supported-calendar-component-set/><d:sync-token/><cs:getctag/>"))
        var result: [CalDAVCalendarInfo] = []
        for response in answer.responses {
            guard response.property(Multistatus.dav, "resourcetype")?.child(Multistatus.caldav, "calendar") != nil,
                let url = final.resolve(response.href)
            else { continue }
            let components =
                response.property(Multistatus.caldav, "supported-calendar-component-set")?
                .children(Multistatus.caldav, "comp").compactMap { $0.attributes["name"]?.uppercased() } ?? []
            guard components.isEmpty || components.contains("VEVENT") else { continue }
            var name = response.property(Multistatus.dav, "displayname")?.trimmedText ?? ""
            if name.isEmpty {
                name = url.path.split(separator: "/").last.map { String($0).percentDecoded } ?? url.path
            }
            result.append(
                CalDAVCalendarInfo(
                    href: url.path, displayName: String(name.prefix(200)), components: components,
                    syncToken: response.property(Multistatus.dav, "sync-token")?.trimmedText.nonEmpty,
                    ctag: response.property(Multistatus.calendarServer, "getctag")?.trimmedText.nonEmpty))
            if result.count >= 200 { break }
        }
        return result
    }

    /// What `sync-collection` says changed since `token` (nil: everything).
    struct SyncChanges: Sendable {
        var changed: [(href: String, etag: String?)] = []
        var removed: [String] = []
        var token: String?
        /// The server truncated the answer (507 for the collection): ask again with `token`.
        var truncated = false
    }

    /// RFC 6578 `sync-collection` with `getetag`. A `.status` with 403 or 409, or a
    /// `valid-sync-token` precondition, means the token is no longer valid.
    func syncCollection(_ calendar: DAVURL, token: String?) async throws(CalDAVError) -> SyncChanges {
        let tokenXML = token.map { "<d:sync-token>\(Self.escape($0))</d:sync-token>" } ?? "<d:sync-token/>"
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:sync-collection xmlns:d="DAV:">\(tokenXML)<d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>
            """
        let (final, answer) = try await multistatus("REPORT", calendar, depth: nil, body: body)
        var changes = SyncChanges(token: answer.syncToken)
        for response in answer.responses {
            guard let url = final.resolve(response.href) else { continue }
            if url.path == calendar.path || url.path == final.path {
                if response.status == 507 { changes.truncated = true }
                continue
            }
            if response.status == 404 {
                changes.removed.append(url.path)
            } else {
                changes.changed.append((url.path, response.property(Multistatus.dav, "getetag")?.trimmedText.nonEmpty))
            }
        }
        return changes
    }

    /// The data and ETags of these resources (`calendar-multiget`).
    func multiget(_ calendar: DAVURL, hrefs: [String]) async throws(CalDAVError) -> [(href: String, etag: String?, data: [UInt8])] {
        var result: [(href: String, etag: String?, data: [UInt8])] = []
        var start = 0
        while start < hrefs.count {
            let batch = hrefs[start..<min(start + Self.multigetBatch, hrefs.count)]
            start += batch.count
            let list = batch.map { "<d:href>\(Self.escape($0))</d:href>" }.joined()
            let body = """
                <?xml version="1.0" encoding="utf-8"?>
                <c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>\(list)</c:calendar-multiget>
                """
            let (final, answer) = try await multistatus("REPORT", calendar, depth: "1", body: body)
            result.append(contentsOf: Self.resources(answer, final))
        }
        return result
    }

    /// `calendar-query` for events overlapping `[from, to)` (UTC seconds), with their data.
    func calendarQuery(_ calendar: DAVURL, from: Int, to: Int) async throws(CalDAVError) -> [(href: String, etag: String?, data: [UInt8])] {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="\(Civil.icsDateTime(from))Z" end="\(Civil.icsDateTime(to))Z"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>
            """
        let (final, answer) = try await multistatus("REPORT", calendar, depth: "1", body: body)
        return Self.resources(answer, final)
    }

    static func resources(_ answer: Multistatus, _ base: DAVURL) -> [(href: String, etag: String?, data: [UInt8])] {
        answer.responses.compactMap { response in
            guard let url = base.resolve(response.href),
                let data = response.property(Multistatus.caldav, "calendar-data")
            else { return nil }
            return (url.path, response.property(Multistatus.dav, "getetag")?.trimmedText.nonEmpty, Array(data.text.utf8))
        }
    }

    /// Text escaped for XML character data.
    static func escape(_ text: String) -> String {
        text.replacing(characters: ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"])
    }
}

extension String {
    /// This text with each character `replacements` names written as its replacement, the
    /// others as they are: the escaping of XML character data and of iCalendar TEXT values.
    func replacing(characters replacements: [Character: String]) -> String {
        var result = ""
        for character in self {
            if let replacement = replacements[character] { result += replacement } else { result.append(character) }
        }
        return result
    }

    /// `%20` → space (invalid escapes kept as written; the result is for display only).
    var percentDecoded: String {
        var bytes: [UInt8] = []
        var iterator = Array(utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = Self.hexValue(iterator[iterator.startIndex]),
                let low = Self.hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator.removeFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
