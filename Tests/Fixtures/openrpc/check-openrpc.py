#!/usr/bin/env python3
"""Checks docs/openrpc.json-style documents (used by Tests/IntegrationTests/OpenRPCTests.swift).

    check-openrpc.py document DOC...            # DOC validates against meta-schema.json, and
                                                # every embedded schema is valid draft 2020-12
    check-openrpc.py exchanges DOC CTXUI FILE   # every exchange in FILE ([{method, params?,
                                                # result?}]) matches DOC's params/result schemas

Prints one line per problem and exits 1 if there is any.
"""
import json
import os
import sys

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def embedded_schemas(doc):
    """(where, schema) for every schema in the document."""
    for index, method in enumerate(doc["methods"]):
        for param in method.get("params", []):
            yield f"{method['name']} params.{param['name']}", param["schema"]
        if "result" in method:
            yield f"{method['name']} result", method["result"]["schema"]
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        yield f"components.schemas.{name}", schema
    for code, schema in doc.get("x-error-data", {}).items():
        yield f"x-error-data.{code}", schema


def check_document(path):
    problems = []
    doc = load(path)
    meta = load(os.path.join(HERE, "meta-schema.json"))
    any_schema = Resource.from_contents({"type": ["object", "boolean"]}, default_specification=DRAFT202012)
    registry = Registry().with_resources([
        ("https://meta.json-schema.tools", any_schema),
        ("https://meta.json-schema.tools/", any_schema),
    ])
    validator = jsonschema.Draft7Validator(meta, registry=registry)
    for error in validator.iter_errors(doc):
        problems.append(f"{path}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    for where, schema in embedded_schemas(doc):
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as error:
            problems.append(f"{path}: {where}: not a valid JSON Schema 2020-12: {error.message}")
    return problems


def check_exchanges(doc_path, ctxui_path, exchanges_path):
    doc = load(doc_path)
    ctxui = load(ctxui_path)
    resources = [
        ("https://contexthost.dev/openrpc.json", Resource.from_contents(doc, default_specification=DRAFT202012)),
        ("https://contexthost.dev/ctxui.schema.json", Resource.from_contents(ctxui, default_specification=DRAFT202012)),
    ]
    if "$id" in ctxui:
        resources.append((ctxui["$id"], Resource.from_contents(ctxui, default_specification=DRAFT202012)))
    registry = Registry().with_resources(resources)
    index = {method["name"]: i for i, method in enumerate(doc["methods"])}
    problems = []
    checked = 0
    for number, exchange in enumerate(load(exchanges_path)):
        name = exchange["method"]
        if name not in index:
            problems.append(f"exchange {number}: {name} is not in {doc_path}")
            continue
        method = doc["methods"][index[name]]
        params = exchange.get("params", {})
        if params is None:
            params = {}
        required = {"type": "object", "required": [p["name"] for p in method["params"] if p.get("required")]}
        targets = [("params", params, required)]
        for p_index, param in enumerate(method["params"]):
            if param["name"] in params:
                ref = f"https://contexthost.dev/openrpc.json#/methods/{index[name]}/params/{p_index}/schema"
                targets.append((f"params.{param['name']}", params[param["name"]], {"$ref": ref}))
        if "result" in exchange:
            if "result" not in method:
                problems.append(f"exchange {number}: {name} has no result in {doc_path}")
            else:
                targets.append(("result", exchange["result"], {"$ref": f"https://contexthost.dev/openrpc.json#/methods/{index[name]}/result/schema"}))
        for where, instance, schema in targets:
            validator = jsonschema.Draft202012Validator(schema, registry=registry)
            for error in validator.iter_errors(instance):
                path = "/".join(map(str, error.absolute_path))
                problems.append(f"exchange {number} {name} {where}/{path}: {error.message[:300]}")
            checked += 1
    print(f"checked {checked} values in {len(load(exchanges_path))} exchanges")
    return problems


def main(argv):
    if len(argv) >= 2 and argv[0] == "document":
        problems = [p for path in argv[1:] for p in check_document(path)]
    elif len(argv) == 4 and argv[0] == "exchanges":
        problems = check_exchanges(argv[1], argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
