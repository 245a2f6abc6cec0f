import runpodSdk from "runpod-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { webhookSender } from "../../src/http/webhook-sender.js";
import { OwnAddress } from "../../src/http/own-address.js";
import { startReceiver } from "../support/receiver.js";

let emu: Emulator;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
afterEach(async () => {
  await emu?.close();
  await receiver?.close();
  receiver = undefined;
});

const REFUSED = ["file:///etc/passwd", "data:text/plain,ok", "ftp://127.0.0.1/hook", "javascript:alert(1)", "ws://127.0.0.1/hook", "gopher://127.0.0.1:70/x", "blob:http://127.0.0.1/x"];

describe("webhook URLs", () => {
  it("other than http: and https: are refused at submission with 400 naming $.webhook, on /run and /runsync", async () => {
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "ep", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    const post = (path: string, webhook: string) =>
      fetch(`${emu.url}/v2/ep/${path}`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify({ input: {}, webhook }) });
    for (const webhook of REFUSED) {
      // POST /run is answered by its fast entry; /runsync through Hono: both refuse.
      for (const path of ["run", "runsync"]) {
        const res = await post(path, webhook);
        expect(res.status, `${path} ${webhook}`).toBe(400);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect(((await res.json()) as { errors: string[] }).errors).toEqual(["$.webhook: expected an http:// or https:// URL"]);
      }
    }
    expect(emu.requests({ operation: "run" }).requests.every((r) => r.status === 400)).toBe(true);
    expect(emu.webhooks()).toEqual([]);
  });

  it("through the service's JS SDK too, while http: and https: ones are taken", async () => {
    receiver = await startReceiver();
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "ep", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    const ep = runpodSdk("any-key", { baseUrl: `${emu.url}/v2` }).endpoint("ep")!;
    await expect(ep.run({ input: {}, webhook: "data:text/plain,ok" })).rejects.toMatchObject({ response: { status: 400 } });
    const { id } = (await ep.run({ input: { n: 1 }, webhook: receiver.url })) as { id: string };
    const secure = (await ep.run({ input: { n: 2 }, webhook: "https://127.0.0.1:9/hook" })) as { id: string; status: string };
    expect(secure.status).toBe("IN_QUEUE");
    await emu.clock.advance(0);
    expect(receiver.calls.map((c) => c.body.id)).toEqual([id]);
  });

  it("are never sent anywhere but over HTTP, even for a job that carries one from elsewhere", async () => {
    const send = webhookSender(1000, new OwnAddress());
    expect(await send("data:text/plain,ok", {})).toEqual({ error: "not an http:// or https:// URL" });
    expect(await send("file:///etc/passwd", {})).toEqual({ error: "not an http:// or https:// URL" });
    expect(await send("http://user:pass@127.0.0.1:9/", {})).toEqual({ error: "a URL with credentials (user:password@) is never sent" });
  });
});
