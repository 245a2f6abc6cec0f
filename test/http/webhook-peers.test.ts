import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { OwnAddress } from "../../src/http/own-address.js";
import { webhookSender, type WebhookWire } from "../../src/http/webhook-sender.js";

let emu: Emulator | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A server on 127.0.0.1 port 0 answering every request with `answer`; it records each call and when each connection closes. */
async function peer(answer: (res: ServerResponse, path: string) => void) {
  const calls: string[] = [];
  const closed: Socket[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls.push(req.url ?? "");
      answer(res, req.url ?? "");
    });
  });
  server.on("connection", (socket) => socket.once("close", () => closed.push(socket)));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, closed };
}

/** Writes 64 KiB chunks for as long as the peer reads them: an answer that never ends. */
function endless(res: ServerResponse): { written: () => number } {
  let written = 0;
  const chunk = Buffer.alloc(64 * 1024, 120);
  res.writeHead(200, { "content-type": "text/plain" });
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) written += chunk.length;
    if (!res.destroyed) res.once("drain", pump);
  };
  res.on("error", () => undefined);
  pump();
  return { written: () => written };
}

const boot = () =>
  createEmulator({ clock: "manual", config: { webhooks: { timeoutMs: 60_000 }, endpoints: [{ id: "ep", handler: "echo", workersMin: 1, coldStartMs: 0 }] } }).then((x) => (emu = x));
const submit = async (webhook: string) => {
  const res = await fetch(`${emu!.url}/v2/ep/run`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify({ input: {}, webhook }) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
};

describe("a webhook receiver's answer", () => {
  it("is read no further than its head: an endless body is not read, the delivery is recorded and the connection closed", async () => {
    const wire: WebhookWire = { answerBytes: 0 };
    let answered: { written: () => number } | undefined;
    const receiver = await peer((res) => (answered = endless(res)));
    const send = webhookSender(5_000, new OwnAddress(), wire);
    expect(await send(`${receiver.url}/hook`, { id: "x" })).toEqual({ status: 200 });
    await expect.poll(() => receiver.closed.length).toBe(1);
    // What the socket had buffered when it was closed, at most: never the endless body.
    expect(wire.answerBytes).toBeGreaterThan(0);
    expect(wire.answerBytes).toBeLessThan(512 * 1024);
    expect(answered!.written()).toBeLessThan(64 * 1024 * 1024);
  });

  it("of 500 MB, declared, through a job: delivered and recorded while the receiver is still sending, its connection closed", async () => {
    const answers: ServerResponse[] = [];
    const receiver = await peer((res) => {
      answers.push(res);
      res.writeHead(200, { "content-length": String(500 * 1024 * 1024) });
      res.on("error", () => undefined);
      res.write(Buffer.alloc(1024 * 1024));
    });
    // The receiver has 60 s to answer: a sender that waited for the whole body would wait them out.
    await boot();
    const id = await submit(`${receiver.url}/hook`);
    await emu!.clock.advance(0);
    expect(emu!.webhooks(id)).toEqual([expect.objectContaining({ attempt: 1, status: 200 })]);
    expect(receiver.calls).toEqual(["/hook"]);
    await expect.poll(() => receiver.closed.length).toBe(1);
    expect(answers[0]!.writableFinished).toBe(false);
  });

  it("follows a redirect as fetch does, reading only heads", async () => {
    const target = await peer((res) => endless(res));
    const redirector = await peer((res) => res.writeHead(307, { location: `${target.url}/moved` }).end());
    const send = webhookSender(5_000, new OwnAddress());
    expect(await send(`${redirector.url}/hook`, {})).toEqual({ status: 200 });
    expect(target.calls).toEqual(["/moved"]);
    const loop = await peer((res) => res.writeHead(302, { location: "/again" }).end());
    expect(await send(`${loop.url}/hook`, {})).toEqual({ error: "more than 5 redirects" });
    expect(loop.calls).toHaveLength(6);
  });
});

describe("a webhook at minipod's own port", () => {
  it("never reaches its control API, by any name of the port or through a redirect: the delivery fails saying why", async () => {
    await boot();
    const port = emu!.port;
    const kept = await submit("http://127.0.0.1:9/unused");
    await emu!.clock.advance(0);
    const redirector = await peer((res) => res.writeHead(307, { location: `http://127.0.0.1:${port}/_emulator/reset` }).end());
    const urls = [
      `${emu!.url}/_emulator/reset`,
      `http://localhost:${port}/_emulator/reset`,
      `http://LOCALHOST.:${port}/_emulator/reset`,
      `http://ep.localhost:${port}/_emulator/reset`,
      `http://[::1]:${port}/_emulator/reset`,
      `http://[::ffff:127.0.0.1]:${port}/_emulator/reset`,
      `http://0.0.0.0:${port}/_emulator/reset`,
      `http://127.0.0.2:${port}/_emulator/reset`,
      `http://2130706433:${port}/_emulator/reset`,
      `http://0x7f.1:${port}/_emulator/reset`,
      `${redirector.url}/hook`,
    ];
    const ids = [];
    for (const url of urls) ids.push(await submit(url));
    await emu!.runUntilIdle();
    for (const [i, id] of ids.entries()) {
      const attempts = emu!.webhooks(id);
      expect(attempts, urls[i]).toHaveLength(3);
      for (const a of attempts) expect(a.error, urls[i]).toMatch(/is minipod's own port .*; minipod never calls itself$/);
    }
    expect(redirector.calls).toHaveLength(3);
    // Nothing was reset: the first job is still there.
    const status = await fetch(`${emu!.url}/v2/ep/status/${kept}`, { headers: { authorization: "Bearer k" } });
    expect(status.status).toBe(200);
  });

  it("is no worker's server either: registering a load-balancing worker at minipod's own port answers 400", async () => {
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "external" }] } });
    const register = (body: Record<string, unknown>) =>
      fetch(`${emu!.url}/_emulator/load-balancers/api/workers`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    for (const body of [{ workerId: "w1", port: emu.port }, { workerId: "w1", port: 9, healthPort: emu.port }]) {
      const res = await register(body);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toMatch(/is minipod's own port/);
    }
    expect((await register({ workerId: "w1", port: 9 })).status).toBe(200);
  });

  it("is refused by the port alone: another port of the same host is called", async () => {
    const own = new OwnAddress();
    own.listening("0.0.0.0", 8080);
    expect(own.refusal("127.0.0.1", 8081)).toBeUndefined();
    expect(own.refusal("example.com", 8080)).toBeUndefined();
    expect(own.refusal("127.0.0.1", 8080)).toMatch(/own port/);
    expect(own.refusesAddress("::ffff:7f00:1", 8080)).toMatch(/own port/);
    expect(own.refusesAddress("0.0.0.0", 8080)).toMatch(/own port/);
    // Before it listens, nothing is its own.
    expect(new OwnAddress().refusal("127.0.0.1", 8080)).toBeUndefined();
  });
});
