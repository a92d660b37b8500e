#!/usr/bin/env python3
"""Lists the Swift functions and initialisers whose declaration spans N or more lines (default 80).

How it counts: every `.swift` file below the given folders (default: Sources and Providers, from
the package root) is parsed by the compiler itself (`swiftc -dump-parse`, parse only: no type
checking, no build), and each `func_decl` and `constructor_decl` it reports is measured from the
line of its `func`/`init` keyword (attributes and doc comments excluded) to the line of its
closing brace, both included: `end - start + 1`. Nested functions count on their own and inside
their parent; closures, computed properties, accessors and `deinit` do not count. Declarations
without a body (protocol requirements) are one or two lines.

Usage: scripts/long-functions.py [--min N] [--quiet] [FOLDER ...]
Prints one line per long function, longest first (`lines  path:line  name`), then the count.
The exit status is 0; the count is the last line (`N functions of 80+ lines`).
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

DECL = re.compile(r'^\s*\((func_decl|constructor_decl) .*?range=\[(?P<file>[^\]]*?):(?P<start>\d+):\d+ - line:(?P<end>\d+):\d+\] "(?P<name>[^"]*)"')


def swift_files(folders):
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
            for name in sorted(files):
                if name.endswith('.swift'):
                    yield os.path.join(root, name)


def measure(path):
    result = subprocess.run(['swiftc', '-dump-parse', path], capture_output=True, text=True)
    found = []
    for line in (result.stdout + result.stderr).splitlines():
        match = DECL.match(line)
        if match and match['file'] == path:
            lines = int(match['end']) - int(match['start']) + 1
            kind = 'init' if line.lstrip().startswith('(constructor_decl') else 'func'
            found.append((lines, path, int(match['start']), f"{kind} {match['name']}"))
    return found


def main(argv):
    minimum = 80
    quiet = False
    folders = []
    arguments = iter(argv)
    for argument in arguments:
        if argument == '--min':
            minimum = int(next(arguments))
        elif argument == '--quiet':
            quiet = True
        else:
            folders.append(argument)
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    folders = folders or ['Sources', 'Providers']
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = [f for found in pool.map(measure, swift_files(folders)) for f in found]
    long = sorted((r for r in results if r[0] >= minimum), key=lambda r: (-r[0], r[1], r[2]))
    if not quiet:
        for lines, path, start, name in long:
            print(f'{lines:5d}  {path}:{start}  {name}')
    print(f'{len(long)} functions of {minimum}+ lines ({len(results)} functions and initialisers in {" ".join(folders)})')


if __name__ == '__main__':
    main(sys.argv[1:])
