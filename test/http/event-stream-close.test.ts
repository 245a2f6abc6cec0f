// An event stream (OpenAI's, the control feed's) honours the request's `Connection: close` as every
// other answer does: it says so in its head and the connection is closed once the stream has ended.
// Without it, the connection is kept for the next request. Raw sockets, so nothing between hides
// the headers.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator, type Handler } from "../../src/index.js";

let emu: Emulator | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await emu?.close();
  emu = undefined;
});

/** A model that streams two chunks at once. */
const twoChunks: Handler = async function* () {
  for (const content of ["hello", " there"]) yield `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })}\n\n`;
};

/**
 * Sends a streamed request on a socket of its own; answers what came back once the stream has
 * ended (its last chunk) and whether the server then closed the connection.
 */
async function streamed(port: number, path: string, body: object, close: boolean): Promise<{ text: string; closed: boolean }> {
  const s = await new Promise<Socket>((resolve) => {
    const made: Socket = connect(port, "127.0.0.1", () => resolve(made));
  });
  sockets.push(s);
  const json = JSON.stringify({ ...body, stream: true });
  s.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\n${close ? "Connection: close\r\n" : ""}\r\n${json}`,
  );
  let text = "";
  await new Promise<void>((resolve, reject) => {
    s.on("data", (d: Buffer) => {
      text += d.toString("latin1");
      if (text.endsWith("\r\n0\r\n\r\n")) resolve();
    });
    s.on("error", reject);
  });
  // The server's close follows its last chunk; a connection kept open stays so (no end within a few turns).
  const closed = await new Promise<boolean>((resolve) => {
    if (s.readableEnded) return resolve(true);
    s.once("end", () => resolve(true));
    let turns = 0;
    const wait = () => (++turns > 20 ? resolve(false) : setImmediate(wait));
    wait();
  });
  return { text, closed };
}

const headOf = (text: string) => text.slice(0, text.indexOf("\r\n\r\n")).toLowerCase();

describe("an OpenAI event stream and Connection: close", () => {
  const routes = [
    { path: "/v2/llm/openai/v1/chat/completions", body: { model: "minipod-llm", messages: [{ role: "user", content: "hi" }] } },
    { path: "/v2/llm/openai/v1/completions", body: { model: "minipod-llm", prompt: "hi" } },
  ];

  it.each(routes)("$path: asked to close, the answer says Connection: close and the connection closes once the stream ends", async ({ path, body }) => {
    emu = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "llm", handler: "twoChunks", workersMin: 1 }] }, handlers: { twoChunks } });
    const { text, closed } = await streamed(emu.port, path, body, true);
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(headOf(text)).toContain("content-type: text/event-stream");
    expect(headOf(text)).toContain("connection: close");
    expect(headOf(text)).not.toContain("keep-alive");
    expect(text).toContain(" there");
    expect(text).toContain("data: [DONE]");
    expect(closed).toBe(true);
  });

  it.each(routes)("$path: not asked to close, the connection is kept", async ({ path, body }) => {
    emu = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "llm", handler: "twoChunks", workersMin: 1 }] }, handlers: { twoChunks } });
    const { text, closed } = await streamed(emu.port, path, body, false);
    expect(headOf(text)).toContain("connection: keep-alive");
    expect(text).toContain("data: [DONE]");
    expect(closed).toBe(false);
  });

  it("a load-balanced stream of the built-in openai handler closes as asked too", async () => {
    emu = await createEmulator({ port: 0, clock: "auto", config: { endpoints: [{ id: "lb", type: "LOAD_BALANCER", handler: "openai", workersMin: 1, coldStartMs: 0, openai: { tokenDelayMs: 0 } }] } });
    const { text, closed } = await streamed(emu.port, "/lb/lb/v1/chat/completions", routes[0]!.body, true);
    expect(headOf(text)).toContain("content-type: text/event-stream");
    expect(headOf(text)).toContain("connection: close");
    expect(closed).toBe(true);
  });
});

describe("the control API's event streams and Connection: close", () => {
  it("the live feed, asked to close, says Connection: close", async () => {
    emu = await createEmulator({ port: 0, clock: "manual" });
    const s = await new Promise<Socket>((resolve) => {
      const made: Socket = connect(emu!.port, "127.0.0.1", () => resolve(made));
    });
    sockets.push(s);
    s.write(`GET /_emulator/feed HTTP/1.1\r\nHost: 127.0.0.1:${emu.port}\r\nConnection: close\r\n\r\n`);
    let text = "";
    await new Promise<void>((resolve, reject) => {
      s.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        if (text.includes("\r\n\r\n")) resolve();
      });
      s.on("error", reject);
    });
    expect(headOf(text)).toContain("content-type: text/event-stream");
    expect(headOf(text)).toContain("connection: close");
    expect(headOf(text)).not.toContain("keep-alive");
  });
});
