// How another web app uses web/context-host-client.js with its generated types: type-checked by
// `tsc --noEmit --strict` in Tests/ContextWebTests/ClientTypesTests.swift (never run). Each
// `@ts-expect-error` line is a misuse the types must refuse: if the types decayed to `any`, the
// directive would be unused and tsc would fail.
import { ContextHostClient, ContextHostError, SUBPROTOCOL } from "../../../web/context-host-client.js";
import type { CtxuiChip, CtxuiItem, Methods } from "../../../web/context-host-protocol";

export async function usage(item: CtxuiItem): Promise<string> {
  const host = await ContextHostClient.connect("ws://127.0.0.1:8765/rpc", { clientName: "usage", timeoutMs: 5000 });
  const protocol: string = SUBPROTOCOL;
  const version: number | undefined = host.initializeResult?.protocolVersion;
  const { providers } = await host.call("providers/list", {});
  const ids: Array<string | undefined> = providers.map((provider) => provider.id);
  const chip: CtxuiChip = await host.call("items/preview", { item });
  const result: Methods["composer/open"]["result"] = await host.call("composer/open", {});
  const off = host.on("providers/changed", (params) => {
    const added: string[] = params.added;
    void added;
  });
  off();
  host.on("$/close", (params) => {
    const code: number = params.code;
    void code;
  });

  // @ts-expect-error: no such method
  await host.call("providers/lst", {});
  // @ts-expect-error: a required parameter (providerId) is missing
  await host.call("providers/retry", {});
  // @ts-expect-error: a parameter of the wrong type
  await host.call("items/preview", { item: "not an item" });
  // @ts-expect-error: the result is typed: a chip has no such member
  chip.notAMember;
  // @ts-expect-error: connect's options are typed
  await ContextHostClient.connect("ws://127.0.0.1:8765/rpc", { timeoutMs: "soon" });
  host.on("providers/changed", (params) => {
    // @ts-expect-error: notification parameters are typed
    const count: number = params.added;
    void count;
  });

  try {
    await host.call("ping", {});
  } catch (error) {
    if (error instanceof ContextHostError) return `${error.method}: ${error.code}`;
  }
  await host.close();
  return `${protocol} ${version} ${ids.join(",")} ${chip.title} ${JSON.stringify(result)}`;
}
