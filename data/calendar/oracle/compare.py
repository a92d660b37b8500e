#!/usr/bin/env python3
"""Compares a provider's expansion of calendar files with the oracle's, file by file.

    compare.py ORACLE.json PROVIDER.json [--json OUT] [--quiet]

Both documents have the shape corpus-oracle.py writes:

    {"window": {"start", "end"}?, "files": {"<basename>": {"occurrences": [{"uid", "summary",
     "start", "end", ...}, ...], "error": null | "message"}}}

For each file it compares the multisets of occurrences on (start, end, uid, summary) (other keys,
such as recurrenceId, are ignored) and prints `same` or the missing rows (in the oracle, not in
the provider) and extra rows (in the provider, not in the oracle), the first 5 of each. Then one
summary line:

    N files, M identical (P%)

N counts the files the oracle expanded without error (a file absent from PROVIDER.json counts
as not identical); files the reference cannot read (it raised an exception) are listed as
`oracle error` and left out of N. A file whose oracle child timed out or crashed is an
`oracle-failure` (counted in summary.oracleFailures): a failure of the run, not of the file.
A file is identical when the provider reports no error and the multisets are equal.

--json OUT writes the same result machine-readably:

    {"oracleWindow", "providerWindow", "summary": {"files", "identical", "percent",
     "oracleErrors", "missingFromProvider", "notInOracle", "oracleFailures"},
     "files": {"<name>": {"status": "same" | "different" | "oracle-error" | "oracle-failure" |
                          "missing-from-provider" | "not-in-oracle",
                          "oracleCount", "providerCount", "missingCount", "extraCount",
                          "missing": [first 5 rows], "extra": [first 5 rows],
                          "oracleError", "providerError"}}}

Exit status 0 whatever the differences (the caller decides thresholds); 2 on a usage error or
an unreadable input.
"""

import argparse
import collections
import json
import sys

SHOWN = 5
KEY = ("start", "end", "uid", "summary")


def load(parser, path):
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as error:
        parser.error(f"cannot read {path}: {error}")
    if not isinstance(document, dict) or not isinstance(document.get("files"), dict):
        parser.error(f"{path}: expected an object with a \"files\" object")
    return document


def rows(entry):
    counter = collections.Counter()
    for occurrence in entry.get("occurrences") or []:
        counter[tuple(str(occurrence.get(key, "")) for key in KEY)] += 1
    return counter


def listed(counter):
    out = []
    for row in sorted(counter):
        out.extend([dict(zip(KEY, row))] * counter[row])
    return out


def show(row):
    return f"{row['start']} … {row['end']}  {row['summary']!r}  [{row['uid']}]"


def compare(oracle, provider):
    results = {}
    for name in sorted(set(oracle["files"]) | set(provider["files"])):
        mine, theirs = oracle["files"].get(name), provider["files"].get(name)
        expected = rows(mine or {})
        actual = rows(theirs or {})
        missing, extra = listed(expected - actual), listed(actual - expected)
        result = {
            "oracleCount": sum(expected.values()) if mine is not None else None,
            "providerCount": sum(actual.values()) if theirs is not None else None,
            "missingCount": len(missing),
            "extraCount": len(extra),
            "missing": missing[:SHOWN],
            "extra": extra[:SHOWN],
            "oracleError": (mine or {}).get("error"),
            "providerError": (theirs or {}).get("error"),
        }
        if mine is None:
            result["status"] = "not-in-oracle"
        elif (mine or {}).get("failure"):
            result["status"] = "oracle-failure"
            result["oracleFailure"] = mine["failure"]
        elif result["oracleError"]:
            result["status"] = "oracle-error"
        elif theirs is None:
            result["status"] = "missing-from-provider"
        elif not missing and not extra and not result["providerError"]:
            result["status"] = "same"
        else:
            result["status"] = "different"
        results[name] = result
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("oracle", metavar="ORACLE.json")
    parser.add_argument("provider", metavar="PROVIDER.json")
    parser.add_argument("--json", metavar="OUT", help="also write the result as JSON to OUT")
    parser.add_argument("--quiet", action="store_true", help="print only files that are not the same, and the summary")
    args = parser.parse_args()
    oracle, provider = load(parser, args.oracle), load(parser, args.provider)

    results = compare(oracle, provider)
    if oracle.get("window") and provider.get("window") and oracle["window"] != provider["window"]:
        print(f"warning: windows differ: oracle {oracle['window']}, provider {provider['window']}")
    for name, result in results.items():
        status = result["status"]
        if status == "same":
            if not args.quiet:
                print(f"{name}: same ({result['oracleCount']})")
            continue
        if status == "oracle-error":
            if not args.quiet:
                print(f"{name}: oracle error ({result['oracleError']}); provider: "
                      f"{result['providerError'] or result['providerCount']}")
            continue
        if status == "oracle-failure":
            print(f"{name}: ORACLE FAILURE ({result['oracleFailure']}: {result['oracleError']})")
            continue
        if status == "not-in-oracle":
            print(f"{name}: not in the oracle ({result['providerCount']} provider occurrences)")
            continue
        if status == "missing-from-provider":
            print(f"{name}: missing from the provider's results ({result['oracleCount']} expected)")
            continue
        print(f"{name}: {result['missingCount']} missing, {result['extraCount']} extra "
              f"(oracle {result['oracleCount']}, provider {result['providerCount']})")
        if result["providerError"]:
            print(f"  provider error: {result['providerError']}")
        for label, key, total in (("-", "missing", "missingCount"), ("+", "extra", "extraCount")):
            for row in result[key]:
                print(f"  {label} {show(row)}")
            if result[total] > SHOWN:
                print(f"  {label} … {result[total] - SHOWN} more {key}")

    statuses = collections.Counter(result["status"] for result in results.values())
    files = statuses["same"] + statuses["different"] + statuses["missing-from-provider"]
    identical = statuses["same"]
    percent = round(100.0 * identical / files, 1) if files else 0.0
    summary = {
        "files": files,
        "identical": identical,
        "percent": percent,
        "oracleErrors": statuses["oracle-error"],
        "missingFromProvider": statuses["missing-from-provider"],
        "notInOracle": statuses["not-in-oracle"],
        "oracleFailures": statuses["oracle-failure"],
    }
    line = f"{files} files, {identical} identical ({percent}%)"
    extras = [f"{summary['oracleErrors']} oracle errors not compared" if summary["oracleErrors"] else "",
              f"{summary['notInOracle']} not in the oracle" if summary["notInOracle"] else "",
              f"{summary['oracleFailures']} ORACLE FAILURES (timeouts or crashes)" if summary["oracleFailures"] else ""]
    print(line + "".join(f"; {text}" for text in extras if text))
    if args.json:
        document = {
            "oracleWindow": oracle.get("window"),
            "providerWindow": provider.get("window"),
            "summary": summary,
            "files": results,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, ensure_ascii=False)
            handle.write("\n")


if __name__ == "__main__":
    main()
