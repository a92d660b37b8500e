#!/usr/bin/env python3
"""Makes COUNT installed copies of one bundle, as `context-host install` leaves them (lazy-bench.sh
INSTALLED=1): a store folder per copy (the bundle's files, its id changed, the library hard-linked)
and a lock file naming them all, with their hashes. Copy 0 keeps the bundle's id.

Usage: make-store.py BUNDLE.ctxp COUNT CONFIG_DIR STORE_DIR
"""
import hashlib, json, os, sys, tarfile

bundle, count, config, store = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with tarfile.open(bundle) as archive:
    files = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}
index = json.loads(files["ctxp-bundle.json"])
base_id, version = index["id"], index["version"]
manifest = files["manifest.yaml"].decode()
library_path = next(f["path"] for f in index["files"] if f["path"].startswith("lib/"))
library = files[library_path]
library_sha = hashlib.sha256(library).hexdigest()
runtime = "native"
for line in manifest.splitlines():
    if line.startswith("runtime:"):
        runtime = line.split(":", 1)[1].strip()
    if line.startswith("swiftVersion:"):
        runtime += " " + line.split(":", 1)[1].strip().strip('"')
first_library = None
providers = []
for i in range(count):
    pid = base_id if i == 0 else f"{base_id}-copy-{i}"
    text = manifest.replace(f"id: {base_id}\n", f"id: {pid}\n").replace("isolation: in-process", "isolation: process")
    folder = os.path.join(store, pid, version)
    os.makedirs(os.path.join(folder, os.path.dirname(library_path)), exist_ok=True)
    with open(os.path.join(folder, "manifest.yaml"), "w") as f:
        f.write(text)
    target = os.path.join(folder, library_path)
    if first_library is None:
        with open(target, "wb") as f:
            f.write(library)
        first_library = target
    else:
        os.link(first_library, target)
    digest = hashlib.sha256(text.encode()).hexdigest()
    providers.append({"id": pid, "current": {
        "version": version, "signer": None, "signerKey": None, "runtime": runtime,
        "indexSHA256": hashlib.sha256(files["ctxp-bundle.json"]).hexdigest(), "manifestSHA256": digest,
        "libraries": [{"platform": library_path.split("/")[1], "path": library_path, "sha256": library_sha}]},
        "previous": None})
providers.sort(key=lambda p: p["id"])
os.makedirs(config, mode=0o700, exist_ok=True)
with open(os.path.join(config, "providers.lock"), "w") as f:
    json.dump({"format": 1, "providers": providers}, f, indent=2)
os.chmod(os.path.join(config, "providers.lock"), 0o600)
