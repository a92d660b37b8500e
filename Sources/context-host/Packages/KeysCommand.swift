import ArgumentParser
import ContextHost
import ContextPackages

extension ContextHostCommand {
    /// `keys`: the signing keys this user trusts (`trusted-keys.json`, docs/packages.md §4).
    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, add and remove the signing keys you trust for installing providers.",
            subcommands: [ListKeys.self, TrustKey.self, RemoveKey.self],
            defaultSubcommand: ListKeys.self)
    }

    /// `keys list`
    struct ListKeys: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The trusted keys, their scopes and comments.")
        @OptionGroup var store: StoreOptions

        func run() throws {
            let locations = try store.locations()
            let file = locations.trustedKeysFile
            do throws(PackageError) {
                // A change a crashed command left half-written is completed first (StoreJournal).
                let completed = try PackageStore(locations: locations).recover(waiting: waitingForStore)
                if !completed.isEmpty { writeStandardError("note: completed an interrupted change to \(completed.joined(separator: " and ")).") }
                let keys = try TrustedKeys.load(file: file)
                if keys.keys.isEmpty { print("No trusted keys (\(file)). Installs with --trust-key RW… add them.") }
                let today = TrustedKeys.today()
                for key in keys.keys {
                    let expiry = key.expires.map { $0 < today ? "  expired \($0)" : "  expires \($0)" } ?? ""
                    print("\(key.publicKey.keyIDString)  \(key.scopes.joined(separator: ","))  \(key.publicKey.base64)  \(key.comment)\(expiry)")
                }
            } catch {
                throw fail(error)
            }
        }
    }

    /// `keys trust KEY --scope PATTERN…`
    struct TrustKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust", abstract: "Trust a public key (the RW… line or a .pub file) for some provider ids; replaces its scopes if trusted already.")
        @Argument(help: ArgumentHelp("The public key: the `RW…` line, or the .pub file.", valueName: "key"))
        var key: String
        @Option(name: .customLong("scope"), help: ArgumentHelp("Provider ids it may sign (repeatable): com.example.*, an exact id, or *.", valueName: "pattern"))
        var scopes: [String]
        @Option(help: ArgumentHelp("A note for yourself (who this key belongs to).", valueName: "text"))
        var comment: String = "trusted with context-host keys trust"
        @Option(help: ArgumentHelp("The last day (UTC, YYYY-MM-DD) the key may be used; installs after it are refused (key-expired). Default: no end.", valueName: "date"))
        var expires: String?
        @OptionGroup var store: StoreOptions

        func validate() throws {
            if scopes.isEmpty { throw ValidationError("Give at least one --scope, e.g. --scope 'com.example.*'.") }
        }

        func run() throws {
            let locations = try store.locations()
            let publicKey: MinisignPublicKey
            do throws(PackageError) {
                publicKey = try MinisignPublicKey(argument: key)
            } catch {
                throw fail(error)
            }
            try store.transaction(in: locations) { (transaction) throws(PackageError) in
                try transaction.trustedKeys.trust(publicKey, scopes: scopes, comment: comment, expires: expires)
            }
            print("Trusted key \(publicKey.keyIDString) for \(scopes.joined(separator: ", "))\(expires.map { " until \($0)" } ?? "").")
        }
    }

    /// `keys remove ID`
    struct RemoveKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Stop trusting a key (installed providers stay; their upgrades then need the key again).")
        @Argument(help: ArgumentHelp("The key id (16 hex digits, as `keys list` shows).", valueName: "id"))
        var id: String
        @OptionGroup var store: StoreOptions

        func run() throws {
            try store.transaction(in: try store.locations()) { (transaction) throws(PackageError) in
                guard transaction.trustedKeys.remove(id: id.uppercased()) else {
                    throw PackageError(.keyUnknown, "no trusted key has the id \(id)", fix: "`context-host keys list` shows the ids")
                }
            }
            print("Removed key \(id.uppercased()).")
        }
    }
}
