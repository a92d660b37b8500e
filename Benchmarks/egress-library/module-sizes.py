"""What ContextNetwork (the broker's AsyncHTTPClient transport and the secret store) adds to the
release `context-host`, estimated from the objects the linker puts in it (issue 37's HTTP library
numbers, docs/architecture.md "HTTP library").

    python3 Benchmarks/egress-library/module-sizes.py .build/release

How: the executable is linked from every object in `context-host.product/Objects.LinkFileList`
without --gc-sections, so each object's allocated sections (`size`: text, data, bss) land in it
whole. A module is "ContextNetwork's alone" when it is linked into context-host but no other
module context-host depends on (Package.swift: all but ContextNetwork) needs it: the modules
those see are read from their compiler dependency files (`*.d`, which list each imported module's
`.swiftmodule` or `module.modulemap`, transitively). Prints the sums per module and in all,
beside `size` of the binary itself.
"""
import collections
import glob
import os
import re
import subprocess
import sys


def size_of(paths):
    """Berkeley `size` text+data+bss of each object, summed per path."""
    result = {}
    for start in range(0, len(paths), 200):
        chunk = paths[start:start + 200]
        output = subprocess.run(["size", "-B"] + chunk, check=True, capture_output=True, text=True).stdout
        for line in output.splitlines()[1:]:
            fields = line.split(None, 5)
            result[fields[5]] = (int(fields[0]), int(fields[1]), int(fields[2]))
    return result


def module_of(path):
    match = re.search(r"/([^/]+)\.build/", path)
    return match.group(1) if match else "?"


def imported(build, module):
    """Modules named in `module`'s dependency files (Swift modules and C module maps)."""
    names = set()
    for depfile in glob.glob(os.path.join(build, module + ".build", "*.d")):
        with open(depfile, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        names.update(re.findall(r"([A-Za-z0-9_]+)\.swiftmodule", text))
        names.update(re.findall(r"/([A-Za-z0-9_]+)/include/module\.modulemap", text))
        names.update(re.findall(r"/([A-Za-z0-9_]+)\.build/module\.modulemap", text))
    return names


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
    with open(os.path.join(build, "context-host.product", "Objects.LinkFileList"), encoding="utf-8") as handle:
        objects = [line.strip().strip("'\"") for line in handle if line.strip()]
    sizes = size_of(objects)
    per_module = collections.defaultdict(lambda: [0, 0, 0, 0])
    for path, (text, data, bss) in sizes.items():
        entry = per_module[module_of(path)]
        entry[0] += text
        entry[1] += data
        entry[2] += bss
        entry[3] += 1
    linked = set(per_module)
    # Everything context-host's other dependencies (Package.swift) import, transitively as their
    # .d files list it.
    others = {"ContextHost", "ContextWeb", "ContextPackages", "ContextConformance", "ContextClient", "ContextMCP", "ContextProtocol", "ArgumentParser", "Logging"}
    needed = set()
    for module in others:
        needed.add(module)
        needed.update(imported(build, module))
    needed.update({"context_host"})
    alone = sorted(m for m in linked if m not in needed)
    total = [sum(v[i] for v in per_module.values()) for i in range(3)]
    binary = os.path.join(build, "context-host")
    line = subprocess.run(["size", "-B", binary], check=True, capture_output=True, text=True).stdout.splitlines()[1].split()
    print(f"context-host: file {os.path.getsize(binary) / 1e6:.1f} MB; size: text {int(line[0]) / 1e6:.2f} MB, data {int(line[1]) / 1e6:.2f} MB, bss {int(line[2]) / 1e6:.2f} MB")
    print(f"all {len(objects)} linked objects: text {total[0] / 1e6:.2f} MB, data {total[1] / 1e6:.2f} MB, bss {total[2] / 1e6:.2f} MB")
    print("| module (linked only for ContextNetwork) | objects | text KB | data KB |")
    print("|---|---:|---:|---:|")
    sums = [0, 0, 0]
    for module in sorted(alone, key=lambda m: -per_module[m][0]):
        text, data, bss, count = per_module[module]
        sums[0] += text
        sums[1] += data
        sums[2] += bss
        print(f"| {module} | {count} | {text / 1e3:,.0f} | {data / 1e3:,.0f} |")
    print(f"| **all of them** | | **{sums[0] / 1e3:,.0f}** | **{sums[1] / 1e3:,.0f}** |")
    share = (sums[0] + sums[1]) / (total[0] + total[1])
    print(f"ContextNetwork and what only it needs: text+data {(sums[0] + sums[1]) / 1e6:.2f} MB of {(total[0] + total[1]) / 1e6:.2f} MB ({share:.1%})")


if __name__ == "__main__":
    main()
