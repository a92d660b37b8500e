"""The test oracle of the Secret Service keyring (Tests/IntegrationTests/SecretKeyringTests.swift):
what the keyring on $DBUS_SESSION_BUS_ADDRESS holds, read with the `secretstorage` package (a
D-Bus client of its own, pure Python over jeepney: not the libsecret the host uses).

    python oracle.py STORE_FOLDER [CANARY...]

Prints one JSON object: the items whose attribute `store` is STORE_FOLDER (their schema, label
and how many bytes their secret decodes to from Base64; never the secret), the number of items
in every collection, and which CANARY texts appear in any item's secret, label or attributes.
"""
import base64
import binascii
import json
import sys

import secretstorage


def main() -> None:
    store, canaries = sys.argv[1], sys.argv[2:]
    connection = secretstorage.dbus_init()
    found = []
    for item in secretstorage.search_items(connection, {"store": store}):
        if item.is_locked():
            item.unlock()
        attributes = item.get_attributes()
        secret = item.get_secret()
        try:
            key_bytes = len(base64.b64decode(secret, validate=True))
        except (binascii.Error, ValueError):
            key_bytes = -1
        found.append({"schema": attributes.get("xdg:schema"), "attributes": sorted(attributes), "label": item.get_label(), "keyBytes": key_bytes})
    total = 0
    seen = set()
    for collection in secretstorage.get_all_collections(connection):
        if collection.is_locked():
            collection.unlock()
        for item in collection.get_all_items():
            total += 1
            text = item.get_secret() + item.get_label().encode() + json.dumps(item.get_attributes()).encode()
            seen.update(canary for canary in canaries if canary.encode() in text)
    print(json.dumps({"items": found, "allItems": total, "canariesFound": sorted(seen)}))


if __name__ == "__main__":
    main()
