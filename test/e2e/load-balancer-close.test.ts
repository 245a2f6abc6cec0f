import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/**
 * An emulator's connections to its load-balancing workers are its own: kept open between
 * requests (through the relay and through the app), and all ended when it closes, while another
 * emulator of the same process keeps its own. The workers are node servers that would keep an
 * idle connection for a minute: only minipod closing it ends one.
 */
interface Worker {
  server: Server;
  url: string;
  open: Set<Socket>;
}

async function worker(): Promise<Worker> {
  const open = new Set<Socket>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
  });
  server.keepAliveTimeout = 60_000;
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open };
}

const started: Worker[] = [];
const emulators: Emulator[] = [];
afterAll(async () => {
  for (const e of emulators) await e.close();
  for (const w of started) {
    w.server.closeAllConnections();
    await new Promise<void>((r) => w.server.close(() => r()));
  }
});

async function emulatorWith(w: Worker): Promise<Emulator> {
  const emu = await createEmulator({ config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: w.url }] } });
  emulators.push(emu);
  return emu;
}

/** One request through the relay (a body of known length) and one through the app (a chunked body). */
async function both(emu: Emulator): Promise<number[]> {
  const headers = { authorization: "k", "content-type": "text/plain" };
  const relay = await fetch(`${emu.url}/lb/api/x`, { method: "POST", headers, body: "known", signal: AbortSignal.timeout(10_000) });
  const chunked = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("chunked")), c.close()) });
  const app = await fetch(`${emu.url}/lb/api/y`, { method: "POST", headers, body: chunked, duplex: "half", signal: AbortSignal.timeout(10_000) } as RequestInit);
  await relay.text();
  await app.text();
  return [relay.status, app.status];
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("closing an emulator", () => {
  it("ends its connections to its load-balancing workers, and leaves another emulator's open", async () => {
    const wa = await worker();
    const wb = await worker();
    started.push(wa, wb);
    const a = await emulatorWith(wa);
    const b = await emulatorWith(wb);
    expect(await both(a)).toEqual([200, 200]);
    expect(await both(b)).toEqual([200, 200]);
    // Kept open between requests: the relay's connection and the app's (the health checks close theirs).
    await waitFor(() => wa.open.size >= 2 && wb.open.size >= 2);
    const bConnections = [...wb.open];

    await a.close();
    await waitFor(() => wa.open.size === 0, 3000);

    // The other emulator's connections are untouched, and it goes on serving on them.
    expect(bConnections.every((s) => !s.destroyed)).toBe(true);
    expect(await both(b)).toEqual([200, 200]);
  });
});
