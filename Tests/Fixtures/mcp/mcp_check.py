"""`context-host mcp` driven by the official MCP Python SDK (PyPI `mcp` 2.x), in one connect mode.

Usage: mcp_check.py MODE BINARY --manifests DIR --extra-manifests DIR --library-path DIR --state-dir DIR
       --fixture-manifest FILE [--http]

With --http the same checks run over Streamable HTTP: one `context-host mcp --http 127.0.0.1:0`
server (restarted before the restart check), each check a client of its own at the printed URL
(the SDK's `mcp.client.streamable_http`); without it each check starts `context-host mcp` on stdio.

MODE is the SDK's connect mode: legacy (2025-11-25 handshake), auto (server/discover, falling
back to initialize) or 2026-07-28 (stateless, no handshake). Each check prints one line,
`PASS name` or `FAIL name: why`; the exit status is 0 only when every check passed. Run by
Tests/IntegrationTests/MCPBridgeTests.swift (test-only: the SDK is installed by scripts/test-venv.sh).
"""

import argparse
import json
import re
import shutil
import sys
import time
import traceback

import os

import anyio
import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult, ToolListChangedNotification

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
failures = []


def report(name, ok, why=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + why), flush=True)
    if not ok:
        failures.append(name)


def check(name):
    """Decorator: runs an async check, reporting an exception as a failure."""
    def wrap(function):
        async def run(*args):
            try:
                await function(*args)
                report(name, True)
            except Exception as error:  # noqa: BLE001 - every failure is reported
                report(name, False, f"{type(error).__name__}: {error} | {traceback.format_exc(limit=3)!r}")
        return run
    return wrap


def server_args(options):
    return ["--manifests", options.manifests, "--manifests", options.extra_manifests,
            "--library-path", options.library_path, "--state-dir", options.state_dir, "--no-installed"]


def server(options):
    if options.http:
        return options.http_host.url
    return StdioServerParameters(command=options.binary, args=["mcp", *server_args(options)])


def start_http(options):
    """Starts (or restarts) the one `mcp --http` server of an --http run."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "web"))
    from ws_check import Host  # the `serve --listen` tests' process wrapper
    if getattr(options, "http_host", None) is not None:
        options.http_host.stop()
    options.http_host = Host(options.binary, ["--http", "127.0.0.1:0", *server_args(options)], command="mcp", scheme="http")


def client(options, mode, **kwargs):
    return Client(server(options), mode=mode, cache=None, read_timeout_seconds=60, **kwargs)


def never_asked(context, params):
    raise AssertionError(f"elicitation was not expected: {params.message}")


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@check("tools are listed with valid names and schemas")
async def tools_listed(options, mode):
    async with client(options, mode) as session:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert session.protocol_version == expected, session.protocol_version
        tools = (await session.list_tools()).tools
        names = [tool.name for tool in tools]
        assert len(names) == len(set(names)), names
        for tool in tools:
            assert NAME.match(tool.name), tool.name
            schema = tool.input_schema
            assert schema.get("type") == "object" and "$ref" not in schema and "anyOf" not in schema, schema
            if tool.name.endswith("_collect"):
                assert "required" not in schema, (tool.name, schema)  # every property optional
            jsonschema.Draft202012Validator.check_schema(schema)
            if tool.output_schema:
                jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            assert tool.annotations is not None and tool.annotations.read_only_hint is not None, tool.name
        for name in ("note_collect", "device_info_make", "location_collect", "location_search", "stock_quote_collect",
                     "note_detail"):
            assert name in names, (name, names)
        note = next(tool for tool in tools if tool.name == "note_collect")
        assert set(note.input_schema["properties"]) == {"title", "body"}, note.input_schema
        assert "A note the user writes" in note.description, note.description  # the manifest's description


@check("Note is collected from arguments alone, without asking")
async def note_from_arguments(options, mode):
    async with client(options, mode, elicitation_callback=never_asked) as session:
        result = await session.call_tool("note_collect", {"title": "Groceries", "body": "Milk and *bread*"})
        assert not result.is_error, text_of(result)
        item = result.structured_content
        assert item["providerId"] == "com.contexthost.note" and item["displayName"] == "Groceries", item
        assert item["content"]["body"] == "Milk and *bread*", item
        assert "Groceries" in text_of(result)
        links = [block for block in result.content if block.type in ("resource", "resource_link")]
        assert links, result.content
        uri = links[0].resource.uri if links[0].type == "resource" else links[0].uri
        assert str(uri).startswith("contexthost://items/com.contexthost.note/"), uri
        # The JSON is not repeated as text.
        assert json.dumps(item["content"]) not in text_of(result)


@check("Note through elicitation: an invalid answer is asked again with the error")
async def note_elicited(options, mode):
    asked = []

    async def answer(context, params):
        asked.append(params)
        schema = params.requested_schema
        assert schema["type"] == "object" and set(schema["properties"]) == {"title", "body"}, schema
        if len(asked) == 1:
            return ElicitResult(action="accept", content={"title": "   ", "body": "Body text"})
        # Asked again: the error is in the message and in the field's description; the body given is the default.
        assert "Title" in params.message and "required" in params.message.lower(), params.message
        assert "Error:" in schema["properties"]["title"].get("description", ""), schema
        assert schema["properties"]["body"].get("default") == "Body text", schema
        return ElicitResult(action="accept", content={"title": "Asked", "body": "Body text"})

    async with client(options, mode, elicitation_callback=answer) as session:
        result = await session.call_tool("note_collect", {})
        assert not result.is_error, text_of(result)
        assert len(asked) == 2, len(asked)
        assert result.structured_content["displayName"] == "Asked", result.structured_content


@check("Location: a search field's several matches are offered to pick from")
async def location_search(options, mode):
    asked = []

    async def answer(context, params):
        asked.append(params)
        properties = params.requested_schema["properties"]
        choices = properties["place"].get("oneOf")
        assert choices and len(choices) > 1, properties
        return ElicitResult(action="accept", content={"place": choices[0]["const"]})

    async with client(options, mode, elicitation_callback=answer) as session:
        # Springfield: several places of that very name.
        result = await session.call_tool("location_collect", {"place": "Springfield"})
        assert not result.is_error, text_of(result)
        assert len(asked) == 1, len(asked)
        assert result.structured_content["type"] == "location", result.structured_content
        assert "Springfield" in result.structured_content["displayName"], result.structured_content
        # One place of that name: used without asking.
        zurich = await session.call_tool("location_collect", {"place": "Zürich"})
        assert not zurich.is_error and len(asked) == 1, text_of(zurich)
        assert zurich.structured_content["displayName"].startswith("Zürich"), zurich.structured_content
        found = await session.call_tool("location_search", {"query": "Zürich"})
        assert not found.is_error and found.structured_content["options"], found
        none = await session.call_tool("location_collect", {"place": "Zzyzxqwv"})
        assert none.is_error and "No place matches" in text_of(none), text_of(none)


@check("a programmatic provider makes an item")
async def device_info(options, mode):
    async with client(options, mode, elicitation_callback=never_asked) as session:
        result = await session.call_tool("device_info_make", {})
        assert not result.is_error, text_of(result)
        assert result.structured_content["providerId"] == "com.contexthost.device-info", result.structured_content


@check("items are resources, listed and read in each encoding")
async def resources(options, mode):
    async with client(options, mode) as session:
        listed = (await session.list_resources()).resources
        uris = [str(resource.uri) for resource in listed]
        assert any(uri.startswith("contexthost://items/com.contexthost.note/") for uri in uris), uris
        assert any(uri.startswith("contexthost://items/com.contexthost.device-info/") for uri in uris), uris
        for resource in listed:
            assert resource.description, resource
            contents = (await session.read_resource(str(resource.uri))).contents
            assert contents, resource.uri
            for content in contents:
                assert content.mime_type, content
                if hasattr(content, "text"):
                    if "json" in content.mime_type:
                        json.loads(content.text)
                else:
                    assert content.blob, content
        note = next(resource for resource in listed if str(resource.uri).startswith("contexthost://items/com.contexthost.note/"))
        assert note.icons and note.icons[0].src.startswith("data:image/"), note.icons
        kinds = {type(content).__name__ for content in (await session.read_resource(str(note.uri))).contents}
        assert len((await session.read_resource(str(note.uri))).contents) >= 2, kinds
        detail = await session.call_tool("note_detail", {"item": str(note.uri)})
        assert not detail.is_error and text_of(detail).startswith("# "), text_of(detail)
        try:
            await session.read_resource("contexthost://items/none/none")
            raise AssertionError("an unknown resource was read")
        except AssertionError:
            raise
        except Exception:  # noqa: BLE001 - the error is what is expected
            pass


@check("a client without elicitation gets the missing fields and their rules")
async def no_elicitation(options, mode):
    async with client(options, mode) as session:
        result = await session.call_tool("note_collect", {"body": "only a body"})
        assert result.is_error, result
        text = text_of(result)
        assert "title" in text and "at most 200 characters" in text and "required" in text, text


@check("a manifest added while connected makes the tools' list change")
async def list_changed(options, mode):
    changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    async with client(options, mode, message_handler=on_message) as session:
        before = [tool.name for tool in (await session.list_tools()).tools]
        assert "fixture_collect" not in before, before
        if mode == "legacy":
            shutil.copy(options.fixture_manifest, options.extra_manifests)
            with anyio.fail_after(20):
                await changed.wait()
        else:
            async with session.listen(tools_list_changed=True) as subscription:
                shutil.copy(options.fixture_manifest, options.extra_manifests)
                with anyio.fail_after(20):
                    async for event in subscription:
                        break
        after = [tool.name for tool in (await session.list_tools()).tools]
        assert "fixture_collect" in after and "fixture_make" in after, after


@check("hung provider calls cancelled by the client end their collections")
async def cancel_hung(options, mode):
    async with client(options, mode, elicitation_callback=never_asked) as session:
        started = time.monotonic()
        # As many hung collections as the host allows open at once (64): unless each cancel
        # closes its collection, no collection can start afterwards.
        async with anyio.create_task_group() as group:
            async def hang():
                await session.call_tool("fixture_collect", {"text": "hang"})
                raise AssertionError("a hung call answered")
            for _ in range(64):
                group.start_soon(hang)
            await anyio.sleep(2)
            group.cancel_scope.cancel()
        assert time.monotonic() - started < 10
        # The bridge and the host go on: a collection starts again (the cancels are sent from
        # tasks of their own, so allow them a moment).
        deadline = time.monotonic() + 5
        while True:
            result = await session.call_tool("fixture_collect", {"text": "after"})
            if not result.is_error or time.monotonic() > deadline:
                break
            await anyio.sleep(0.2)
        assert not result.is_error and result.structured_content["displayName"] == "after", text_of(result)


@check("a provider's progress reaches the client as notifications/progress")
async def progress(options, mode):
    seen = []

    async def on_progress(done, total, message):
        seen.append((done, total, message))

    async with client(options, mode, elicitation_callback=never_asked) as session:
        result = await session.call_tool("fixture_collect", {"text": "progress"}, progress_callback=on_progress)
        assert not result.is_error, text_of(result)
        assert len(seen) >= 2 and seen[-1][0] == 3 and all(total == 3 for _, total, _ in seen), seen
        assert seen[0][2] == "step 1 of 3", seen


@check("collected items survive a restart")
async def restart(options, mode):
    async with client(options, mode) as session:
        uris = [str(resource.uri) for resource in (await session.list_resources()).resources]
        assert any(uri.startswith("contexthost://items/com.contexthost.note/") for uri in uris), uris


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["legacy", "auto", "2026-07-28"])
    parser.add_argument("binary")
    parser.add_argument("--manifests", required=True)
    parser.add_argument("--extra-manifests", required=True)
    parser.add_argument("--library-path", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--fixture-manifest", required=True)
    parser.add_argument("--http", action="store_true", help="over Streamable HTTP (mcp --http) instead of stdio")
    options = parser.parse_args()
    mode = options.mode
    if options.http:
        start_http(options)
    try:
        for run in (tools_listed, note_from_arguments, note_elicited, location_search, device_info, resources,
                    no_elicitation, list_changed, cancel_hung, progress, restart):
            if run is restart and options.http:
                start_http(options)  # stdio restarts with every client; over HTTP the server restarts here
            await run(options, mode)
    finally:
        if options.http:
            options.http_host.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
