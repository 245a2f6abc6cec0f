import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/**
 * The 5.5-minute limit of a load-balanced request, for a WebSocket: the worker answers the
 * upgrade within it (else 524), and a joined connection silent both ways for that long is closed;
 * one that keeps talking stays open. On the manual clock, over raw sockets: the worker answers an
 * upgrade with 101 and echoes every byte, or, on `/mute`, never answers.
 */
let emu: Emulator;
let worker: Server;
/** The worker's upgraded connections, with the path each asked for and whether minipod has ended it. */
const upgraded: Array<{ path: string; socket: Socket; ended: boolean }> = [];

beforeAll(async () => {
  worker = createServer((req, res) => void res.writeHead(200).end("ok"));
  worker.on("upgrade", (req, socket: Socket) => {
    const u = { path: req.url!, socket, ended: false };
    upgraded.push(u);
    socket.on("end", () => (u.ended = true));
    socket.on("error", () => {});
    if (req.url === "/mute") return;
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.on("data", (d: Buffer) => socket.write(d));
  });
  await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
  emu = await createEmulator({
    clock: "manual",
    config: { endpoints: [{ id: "ws", type: "LOAD_BALANCER", handler: `http://127.0.0.1:${(worker.address() as AddressInfo).port}`, workersMax: 1, requestCount: 1 }] },
  });
  const warm = await fetch(`${emu.url}/lb/ws/warm`, { headers: { authorization: "k" }, signal: AbortSignal.timeout(10_000) });
  expect(warm.status).toBe(200);
});
afterAll(async () => {
  await emu?.close();
  for (const u of upgraded) u.socket.destroy();
  worker.closeAllConnections();
  await new Promise<void>((r) => worker.close(() => r()));
});

/** A client's upgrade on a raw socket: what it has read so far, and whether it has closed. */
function open(path: string) {
  const state = { text: "", closed: false, socket: undefined as unknown as Socket };
  state.socket = connect(emu.port, "127.0.0.1", () =>
    state.socket.write(
      `GET /lb/ws${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ),
  );
  state.socket.on("data", (d: Buffer) => (state.text += d.toString("latin1")));
  state.socket.on("close", () => (state.closed = true));
  state.socket.on("error", () => {});
  return state;
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
}

const inFlight = async () => ((await (await fetch(`${emu.url}/_emulator/load-balancers`)).json()) as { endpoints: Array<{ status: { requests: { inFlight: number } } }> }).endpoints[0]!.status.requests.inFlight;

describe("a WebSocket whose client closes its side", () => {
  it("is over: the worker's connection ends and its slot is free for the next (requestCount 1)", async () => {
    for (let i = 0; i < 3; i++) {
      const c = open("/half");
      await waitFor(() => c.text.includes("\r\n\r\n"));
      expect(c.text).toMatch(/^HTTP\/1\.1 101 /);
      const workerSide = upgraded.at(-1)!;
      // The client sends its last bytes and closes its half; the worker (node's server) keeps its own open.
      c.socket.end("bye");
      await waitFor(() => workerSide.ended && c.closed);
      expect(await inFlight()).toBe(0);
    }
  });
});

describe("a WebSocket to a load-balancing endpoint, on the virtual clock", () => {
  it("is closed once silent both ways for 5.5 minutes; each byte either way starts the count again", async () => {
    const c = open("/chat");
    await waitFor(() => c.text.includes("\r\n\r\n"));
    expect(c.text).toMatch(/^HTTP\/1\.1 101 /);
    const workerSide = upgraded.at(-1)!;
    await emu.clock.advance(329_999);
    expect(c.closed).toBe(false);
    // A message and its echo: the silence starts again from here.
    c.socket.write("ping");
    await waitFor(() => c.text.endsWith("ping"));
    await emu.clock.advance(329_999);
    expect(c.closed).toBe(false);
    expect(workerSide.ended).toBe(false);
    await emu.clock.advance(1);
    await waitFor(() => c.closed && workerSide.ended);
    // The worker's slot is free again.
    expect(await inFlight()).toBe(0);
  });

  it("answers 524 when the worker has not answered the upgrade within 5.5 minutes, and frees the worker", async () => {
    const c = open("/mute");
    await waitFor(() => upgraded.at(-1)?.path === "/mute");
    await emu.clock.advance(329_999);
    expect(c.text).toBe("");
    await emu.clock.advance(1);
    await waitFor(() => c.closed);
    expect(c.text).toMatch(/^HTTP\/1\.1 524 /);
    expect(c.text).toContain("processing took longer than 5.5 minutes");
    await waitFor(() => upgraded.at(-1)!.ended);
    expect(await inFlight()).toBe(0);
  });
});
