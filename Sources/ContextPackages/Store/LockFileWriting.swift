import ContextHost
import ContextProviderKit

/// Writing the lock file: only the commands that change what is installed write it, so this
/// lives with packaging; the host reads it (`LockFile.load`) and never writes it.
extension LockFile {
    /// The lock as indented JSON (stable order: providers by id, fields as documented).
    package func encoded() -> [UInt8] {
        func installed(_ value: Installed) -> JSONValue {
            var object = JSONObject()
            object["version"] = .string(value.version)
            object["signer"] = value.signer.map(JSONValue.string) ?? .null
            object["signerKey"] = value.signerKey.map(JSONValue.string) ?? .null
            object["runtime"] = .string(value.runtime)
            object["indexSHA256"] = .string(value.indexSHA256)
            object["manifestSHA256"] = .string(value.manifestSHA256)
            object["libraries"] = .array(value.libraries.map { library in
                var entry = JSONObject()
                entry["platform"] = .string(library.platform)
                entry["path"] = .string(library.path)
                entry["sha256"] = .string(library.sha256)
                return .object(entry)
            })
            return .object(object)
        }
        var root = JSONObject()
        root["format"] = .number(Double(Self.formatVersion))
        root["providers"] = .array(providers.map { entry in
            var object = JSONObject()
            object["id"] = .string(entry.id)
            object["current"] = installed(entry.current)
            object["previous"] = entry.previous.map(installed) ?? .null
            return .object(object)
        })
        return Array(IndentedJSON.render(.object(root)).utf8)
    }

    /// Writes the lock atomically (0600; the folder is made 0700 if missing).
    package func save(file path: String) throws(PackageError) {
        let folder = ManifestFileSystem.directoryName(path)
        guard Directories.makePrivate(folder) else {
            throw PackageError(
                .storeIO, "cannot create the configuration folder \(folder)",
                fix: "check that its parent exists and is writable by you")
        }
        if let reason = AtomicFile.write(encoded(), to: path, mode: 0o600) {
            throw PackageError(
                .storeIO, "cannot write the lock file \(path): \(reason); nothing was changed",
                fix: "free disk space or fix the folder's permissions, then run the command again")
        }
    }
}

/// JSON with two-space indentation and one field per line, for files people read and diff.
package enum IndentedJSON {
    package static func render(_ value: JSONValue) -> String {
        var output = ""
        write(value, indent: "", into: &output)
        return output + "\n"
    }

    private static func write(_ value: JSONValue, indent: String, into output: inout String) {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            output += "[\n"
            for (index, item) in items.enumerated() {
                output += inner
                write(item, indent: inner, into: &output)
                output += index == items.count - 1 ? "\n" : ",\n"
            }
            output += indent + "]"
        case .object(let object) where !object.isEmpty:
            output += "{\n"
            var remaining = object.count
            for (key, item) in object {
                remaining -= 1
                output += inner + JSONValue.string(key).jsonString + ": "
                write(item, indent: inner, into: &output)
                output += remaining == 0 ? "\n" : ",\n"
            }
            output += indent + "}"
        default:
            output += value.jsonString
        }
    }
}
