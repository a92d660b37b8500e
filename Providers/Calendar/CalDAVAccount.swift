import ContextProviderKit
import Synchronization

/// A CalDAV account: reads the user's calendars from the server into the cache in the
/// provider's data folder (incrementally, with `sync-collection`), and serves that cache —
/// also when the server cannot be reached, marked with its age.
package final class CalDAVAccount: Sendable {
    /// Where the account came from (settings), for messages.
    let url: DAVURL
    let user: String
    let client: CalDAVClient
    /// The provider's data folder; nil: the cache lives in memory only.
    let folder: String?
    /// Least seconds between two syncs (0: every request that reads events syncs).
    let refreshSeconds: Int
    /// Days ahead read by `calendar-query` on a server without `sync-collection`.
    let windowDays: Int

    /// The state of the last sync attempt, for the views.
    package struct Status: Sendable, Equatable {
        /// When the cache was last brought up to date (UTC seconds); nil: never.
        package var syncedAt: Int?
        /// Why the last attempt failed; nil when it succeeded (or none was made).
        var error: CalDAVError?
        /// The error's text (message and hint), nil when the last sync succeeded.
        package var errorText: String? { error?.description }
    }

    private struct State {
        var cache: CalDAVCache?
        var loaded = false
        var lastAttempt: Int?
        var lastError: CalDAVError?
        var generation = 0
        var syncing = false
        var files: (generation: Int, start: Int, files: [CalendarFile])?
    }

    private let state = Mutex(State())

    package init(url: DAVURL, user: String, transport: any CalDAVTransport, folder: String?, refreshSeconds: Int, windowDays: Int) {
        self.url = url
        self.user = user
        self.client = CalDAVClient(transport: transport, user: user)
        self.folder = folder
        self.refreshSeconds = refreshSeconds
        self.windowDays = windowDays
    }

    var accountKey: String { "\(url.string)|\(user)" }

    /// A number that changes whenever the cached calendars change.
    var generation: Int { state.withLock { $0.generation } }

    package var status: Status {
        loadIfNeeded()
        return state.withLock { Status(syncedAt: $0.cache?.syncedAt, error: $0.lastError) }
    }

    /// Reads the cache from the data folder once.
    private func loadIfNeeded() {
        guard state.withLock({ !$0.loaded }) else { return }
        let loaded = folder.flatMap { CalDAVCache.load(folder: $0) }
        let key = accountKey
        state.withLock { state in
            guard !state.loaded else { return }
            state.loaded = true
            if let loaded, loaded.account == key {
                state.cache = loaded
                state.generation += 1
            }
        }
    }

    /// Syncs when the last attempt is at least `refreshSeconds` old (one at a time: a request
    /// that comes while another syncs uses the cache as it is).
    package func refreshIfDue(now: Int) async {
        loadIfNeeded()
        let due = state.withLock { state -> Bool in
            guard !state.syncing else { return false }
            if let last = state.lastAttempt, now >= last, now - last < refreshSeconds { return false }
            state.syncing = true
            state.lastAttempt = now
            return true
        }
        guard due else { return }
        let start = state.withLock { $0.cache } ?? CalDAVCache(account: accountKey)
        do throws(CalDAVError) {
            let updated = try await sync(start, now: now)
            if let folder { try updated.save(folder: folder) }
            state.withLock { state in
                if state.cache != updated { state.generation += 1 }
                state.cache = updated
                state.lastError = nil
                state.syncing = false
            }
        } catch {
            Log.warning(error.description)
            state.withLock { state in
                state.lastError = error
                state.syncing = false
            }
        }
    }

    /// One sync: the calendar list, then per calendar the changes since its sync token
    /// (`sync-collection` + `calendar-multiget` of what changed), or the window's events
    /// (`calendar-query`) when the server cannot sync.
    func sync(_ previous: CalDAVCache, now: Int) async throws(CalDAVError) -> CalDAVCache {
        var cache = previous.account == accountKey ? previous : CalDAVCache(account: accountKey)
        var home: DAVURL
        if let known = cache.home.flatMap({ url.resolve($0) }) {
            home = known
        } else {
            home = try await client.discoverHome(url)
        }
        let infos: [CalDAVCalendarInfo]
        do throws(CalDAVError) {
            infos = try await client.calendars(in: home)
        } catch {
            guard cache.home != nil, case .status = error else { throw error }
            // The home moved: discover it again.
            home = try await client.discoverHome(url)
            infos = try await client.calendars(in: home)
        }
        cache.home = home.path
        var calendars: [CalDAVCache.Calendar] = []
        for info in infos {
            guard let calendarURL = home.resolve(info.href) else { continue }
            var calendar =
                cache.calendars.first { $0.href == info.href }
                ?? CalDAVCache.Calendar(href: info.href, name: info.displayName, syncedAt: now)
            calendar.name = info.displayName
            if let token = info.syncToken, !calendar.usesQuery, calendar.syncToken == token {
                // Nothing changed since the last sync.
            } else if info.syncToken != nil {
                try await syncCollection(calendarURL, &calendar)
            } else {
                let from = now - 86_400
                let to = now + (windowDays + 1) * 86_400
                let found = try await client.calendarQuery(calendarURL, from: from, to: to)
                calendar.resources = [:]
                for item in found { calendar.resources[item.href] = .init(etag: item.etag, data: item.data) }
                calendar.usesQuery = true
                calendar.syncToken = nil
            }
            calendar.syncedAt = now
            calendars.append(calendar)
            guard calendars.reduce(0, { $0 + $1.resources.count }) <= 200_000 else {
                throw .badAnswer(url: calendarURL.string, reason: "more than 200,000 events in the account")
            }
        }
        cache.calendars = calendars
        cache.syncedAt = now
        guard cache.dataBytes <= CalDAVCache.maximumBytes / 2 else {
            throw .badAnswer(url: home.string, reason: "the calendars hold over \(CalDAVCache.maximumBytes >> 21) MB")
        }
        return cache
    }

    /// RFC 6578: the changes since the calendar's token (all members without one), then the data
    /// of the members whose ETag changed. An invalid token (403/409) starts over.
    private func syncCollection(_ calendarURL: DAVURL, _ calendar: inout CalDAVCache.Calendar) async throws(CalDAVError) {
        var token = calendar.usesQuery ? nil : calendar.syncToken
        if token == nil { calendar.resources = [:] }
        calendar.usesQuery = false
        for _ in 0..<100 {
            let changes: CalDAVClient.SyncChanges
            do throws(CalDAVError) {
                changes = try await client.syncCollection(calendarURL, token: token)
            } catch {
                guard token != nil, case .status(_, _, let status) = error, status == 403 || status == 409 || status == 400 else {
                    throw error
                }
                token = nil
                calendar.resources = [:]
                continue
            }
            for href in changes.removed { calendar.resources[href] = nil }
            let wanted = changes.changed.filter { change in
                guard let etag = change.etag, let known = calendar.resources[change.href] else { return true }
                return known.etag != etag
            }.map(\.href)
            if !wanted.isEmpty {
                for item in try await client.multiget(calendarURL, hrefs: wanted) {
                    calendar.resources[item.href] = .init(etag: item.etag, data: item.data)
                }
            }
            token = changes.token
            calendar.syncToken = changes.token
            guard changes.truncated, changes.token != nil else { return }
        }
    }

    /// How many events the cached calendars hold (for benchmarks).
    package var eventCount: Int { files(start: 0).reduce(0) { $0 + $1.events.count } }

    /// The cached calendars as calendar files (each resource parsed on its own, so messages
    /// name it), numbered from `start`; parsed again only when the cache or `start` changed.
    func files(start: Int) -> [CalendarFile] {
        loadIfNeeded()
        let (generation, cache, built) = state.withLock { ($0.generation, $0.cache, $0.files) }
        if let built, built.generation == generation, built.start == start { return built.files }
        var files: [CalendarFile] = []
        for (offset, calendar) in (cache?.calendars ?? []).enumerated() {
            var events: [CalendarEvent] = []
            var diagnostics: [Diagnostic] = []
            for (href, resource) in calendar.resources.sorted(by: { $0.key < $1.key }) {
                let name = calendar.name + "/" + (href.split(separator: "/").last.map(String.init) ?? href)
                let file = CalendarReader.read(
                    bytes: resource.data, name: name, path: "caldav:" + href, calendarIndex: start + offset)
                events.append(contentsOf: file.events)
                diagnostics.append(contentsOf: file.diagnostics)
            }
            files.append(CalendarFile(path: "caldav:" + calendar.href, name: calendar.name, events: events, diagnostics: diagnostics))
        }
        state.withLock { $0.files = (generation, start, files) }
        return files
    }
}
