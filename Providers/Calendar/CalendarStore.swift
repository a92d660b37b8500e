import ContextProviderKit
import ProviderSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds, reads and caches the configured calendar files; a file is read again only when its
/// size or modification time changes.
final class CalendarStore: Sendable {
    /// Everything read from the calendar files at one moment.
    struct Snapshot: Sendable {
        var files: [CalendarFile]
        var events: [CalendarEvent]
        var diagnostics: [Diagnostic]
        var generation: Int
        /// Calendar names by `calendarIndex`.
        var calendarNames: [String] { files.map(\.name) }
    }

    /// The configured sources: folders (every `.ics` inside, two levels deep) or files.
    let sources: [String]
    /// The CalDAV account whose cached calendars follow the files, if one is configured.
    let remote: CalDAVAccount?

    private struct State {
        var keys: [String: FileIO.Info] = [:]
        var remoteGeneration = -1
        var snapshot: Snapshot?
        var generation = 0
        var expansionKey: ExpansionKey?
        var expansion: [Occurrence] = []
        /// Expansion notes already logged (each once).
        var logged: Set<String> = []
        var searchGeneration = -1
        var searchIndex: [[UInt8]] = []
    }

    private struct ExpansionKey: Equatable {
        var generation: Int
        var from: Int
        var to: Int
        var zone: String
    }

    private let state = Mutex(State())

    init(sources: [String], remote: CalDAVAccount? = nil) {
        self.sources = sources
        self.remote = remote
    }

    /// The calendar files the sources name right now, sorted by path within each source.
    func calendarPaths() -> [String] {
        var paths: [String] = []
        for source in sources {
            guard let info = FileIO.info(source) else { continue }
            if info.isDirectory {
                collect(source, depth: 0, into: &paths)
            } else {
                paths.append(source)
            }
        }
        return paths
    }

    private func collect(_ folder: String, depth: Int, into paths: inout [String]) {
        guard let names = FileIO.list(folder) else { return }
        for name in names where !name.hasPrefix(".") {
            let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            if name.lowercased().hasSuffix(".ics") || name.lowercased().hasSuffix(".ical") {
                paths.append(path)
            } else if depth < 1, let info = FileIO.info(path), info.isDirectory {
                collect(path, depth: depth + 1, into: &paths)
            }
        }
    }

    /// The current snapshot, re-reading only files that changed.
    func snapshot() -> Snapshot {
        let paths = calendarPaths()
        var infos: [String: FileIO.Info] = [:]
        for path in paths { infos[path] = FileIO.info(path) }
        let remoteGeneration = remote?.generation ?? 0
        if let cached = state.withLock({
            $0.keys == infos && $0.remoteGeneration == remoteGeneration && $0.snapshot != nil ? $0.snapshot : nil
        }),
            cached.files.prefix(paths.count).map(\.path) == paths
        {
            return cached
        }
        let previous = state.withLock { $0.snapshot }
        // The request this read is for hears it as `$/progress` (calendar files done of all).
        let progress = ProgressReporter.current
        var files: [CalendarFile] = []
        for (index, path) in paths.enumerated() {
            // An unchanged file at the same place in the list is kept as read.
            if let previous, index < previous.files.count, previous.files[index].path == path,
                state.withLock({ $0.keys[path] }) == infos[path]
            {
                files.append(previous.files[index])
            } else {
                files.append(CalendarReader.read(path: path, calendarIndex: index))
            }
            progress?.report(done: Double(index + 1), total: Double(paths.count), message: "Reading calendars")
        }
        if let remote { files += remote.files(start: files.count) }
        let snapshot = state.withLock { state -> Snapshot in
            state.generation += 1
            let snapshot = Snapshot(
                files: files, events: files.flatMap(\.events), diagnostics: files.flatMap(\.diagnostics),
                generation: state.generation)
            state.keys = infos
            state.remoteGeneration = remoteGeneration
            state.snapshot = snapshot
            return snapshot
        }
        for diagnostic in snapshot.diagnostics { Log.warning(diagnostic.description) }
        return snapshot
    }

    /// The occurrences overlapping `[from, to)`, cached per snapshot and window.
    func occurrences(in snapshot: Snapshot, from: Int, to: Int, zone: ZoneRules) -> [Occurrence] {
        let key = ExpansionKey(generation: snapshot.generation, from: from, to: to, zone: zone.name)
        if let cached = state.withLock({ $0.expansionKey == key ? $0.expansion : nil }) { return cached }
        let result = Expansion.expand(snapshot.events, from: from, to: to, floatingZone: zone)
        let fresh = state.withLock { state -> [Diagnostic] in
            state.expansionKey = key
            state.expansion = result.occurrences
            if state.logged.count > 1_000 { state.logged.removeAll() }
            return result.notes.filter { state.logged.insert($0.description).inserted }
        }
        for note in fresh { Log.warning(note.description) }
        return result.occurrences
    }
}

extension CalendarStore {
    /// Per event, the lower-cased text a query searches (title, calendar, location, notes,
    /// organizer), built once per snapshot.
    func searchIndex(_ snapshot: Snapshot) -> [[UInt8]] {
        if let cached = state.withLock({ $0.searchGeneration == snapshot.generation ? $0.searchIndex : nil }) {
            return cached
        }
        let names = snapshot.calendarNames
        let index = snapshot.events.map { event -> [UInt8] in
            var text = event.summary + "\n" + names[event.calendarIndex]
            if let location = event.location { text += "\n" + location }
            if let description = event.description { text += "\n" + description }
            if let organizer = event.organizer { text += "\n" + organizer.display }
            return Array(text.lowercased().utf8)
        }
        state.withLock {
            $0.searchGeneration = snapshot.generation
            $0.searchIndex = index
        }
        return index
    }

    /// Whether `haystack` contains `needle` (bytes).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        let n = needle.count
        if n == 0 { return true }
        let h = haystack.count
        if n > h { return false }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { nee in
                let first = nee[0]
                var i = 0
                while i <= h - n {
                    if hay[i] == first {
                        var j = 1
                        while j < n, hay[i + j] == nee[j] { j += 1 }
                        if j == n { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }
}

/// Messages for the operator, on stderr (stdout belongs to the host protocol).
enum Log {
    static func warning(_ message: String) {
        writeStandardError("calendar: warning: \(message)")
    }
}
