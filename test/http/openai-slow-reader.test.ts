// An OpenAI stream written to a client that stops reading, on the auto clock: while a piece of it
// is still going out to the socket, minipod waits on the client in real time, so the clock does not
// skip ahead (to a job's timeout, or a load-balanced exchange's 5.5-minute limit) meanwhile; a
// client that takes nothing for STALLED_READER_MS of wall time stops holding it. The client is a raw socket
// that pauses reading; wall time is a fake one, moved by the test.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { STALLED_READER_MS } from "../../src/http/pending-writes.js";
import { createEmulator, type Emulator, type Handler } from "../../src/index.js";
import { FakeWall } from "../support/fake-wall.js";

let emu: Emulator | undefined;
let socket: Socket | undefined;
afterEach(async () => {
  socket?.destroy();
  socket = undefined;
  await emu?.close();
  emu = undefined;
});

/** Far more than the kernel's socket buffers hold between minipod and a client that does not read (and within a job's 20 MB of output). */
const BIG = 12 * 1024 * 1024;
const chunk = (content: string) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** A model that streams a very large first piece, then thinks for `sleepMs` of virtual time, then ends. */
const flood = (sleepMs: number): Handler =>
  async function* (_input, ctx) {
    yield chunk("x".repeat(BIG));
    await ctx.sleep(sleepMs);
    yield chunk("the end");
  };

async function clockView(url: string): Promise<{ waiting: number; realWork: boolean }> {
  return (await (await fetch(`${url}/_emulator/clock`)).json()) as { waiting: number; realWork: boolean };
}

/** Asks the clock's view until `ok` holds of it, a bounded number of times: its last view. */
async function until(url: string, ok: (v: { waiting: number; realWork: boolean }) => boolean) {
  let view = await clockView(url);
  for (let i = 0; i < 500 && !ok(view); i++) view = await clockView(url);
  return view;
}

/** Sends a streamed chat completion (or `body`) on a socket that does not read; `resume()` reads the rest to the end. */
async function pausedStream(port: number, path: string, body = JSON.stringify({ model: "minipod-llm", messages: [{ role: "user", content: "hi" }], stream: true })) {
  const s = (socket = await new Promise<Socket>((resolve) => {
    const made: Socket = connect(port, "127.0.0.1", () => resolve(made));
  }));
  s.pause();
  s.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  return {
    resume: () =>
      new Promise<string>((resolve, reject) => {
        // Its chunked body ends with an empty chunk; the connection closes then, as the request asked.
        const parts: Buffer[] = [];
        const whole = () => Buffer.concat(parts).toString("latin1");
        let tail = "";
        s.on("data", (d: Buffer) => {
          parts.push(d);
          tail = (tail + d.toString("latin1", Math.max(0, d.length - 16))).slice(-16);
          if (tail.endsWith("\r\n0\r\n\r\n")) resolve(whole());
        });
        s.on("end", () => resolve(whole()));
        s.on("error", reject);
        s.resume();
      }),
  };
}

describe("an OpenAI stream to a client that stops reading, on the auto clock", () => {
  const PATH = "/v2/llm/openai/v1/chat/completions";

  it("a piece still going out is real work: the clock does not skip meanwhile, and the stream ends whole once read", async () => {
    emu = await createEmulator({ clock: "auto", config: { endpoints: [{ id: "llm", handler: "flood", workersMin: 1 }] }, handlers: { flood: flood(60_000) } });
    const before = emu.clock.now();
    const call = await pausedStream(emu.port, PATH);
    // The stream waits on virtual time for the model's next piece; its first is stuck in the socket.
    const view = await until(emu.url, (v) => v.realWork && v.waiting > 0);
    expect(view).toMatchObject({ realWork: true });
    expect(view.waiting).toBeGreaterThan(0);
    expect(emu.clock.now() - before).toBeLessThan(60_000);
    const text = await call.resume();
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain("the end");
    expect(text).toContain("data: [DONE]");
    expect(await clockView(emu.url)).toMatchObject({ waiting: 0, realWork: false });
  });

  it(`a client that takes nothing for ${STALLED_READER_MS / 60_000} minutes of wall time no longer holds the clock: the job's timeout cuts its stream`, async () => {
    const wall = new FakeWall();
    emu = await createEmulator({
      clock: { mode: "auto", wall },
      config: { endpoints: [{ id: "llm", handler: "flood", workersMin: 1, executionTimeoutMs: 600_000 }] },
      handlers: { flood: flood(3_600_000) },
    });
    const before = emu.clock.now();
    const call = await pausedStream(emu.port, PATH);
    expect(await until(emu.url, (v) => v.realWork && v.waiting > 0)).toMatchObject({ realWork: true });
    wall.advance(STALLED_READER_MS - 1);
    expect(await clockView(emu.url)).toMatchObject({ realWork: true });
    // Virtual time follows the wall meanwhile, short of the job's timeout.
    expect(emu.clock.now() - before).toBeLessThan(600_000);
    wall.advance(1);
    // The clock skips ahead to the job's timeout, which ends the stream with an error event.
    expect(await until(emu.url, (v) => v.waiting === 0)).toMatchObject({ waiting: 0 });
    expect(emu.clock.now() - before).toBeGreaterThanOrEqual(600_000);
    const text = await call.resume();
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).not.toContain("the end");
    expect(text).toMatch(/data: \{"error":\{"message":"[^"]*timed out|execution timeout/);
  });

  it("a load-balanced stream of the built-in openai handler: a piece still going out is real work, so the 5.5-minute limit does not cut it meanwhile", async () => {
    // The most text the built-in handler answers at once, in one word: more than the socket buffers hold.
    const reply = `${"y".repeat(4_194_304 - 40)} and the end`;
    emu = await createEmulator({
      clock: "auto",
      config: { endpoints: [{ id: "lb", type: "LOAD_BALANCER", handler: "openai", workersMin: 1, coldStartMs: 0, openai: { reply, tokenDelayMs: 1000 } }] },
    });
    const before = emu.clock.now();
    const call = await pausedStream(emu.port, "/lb/lb/v1/chat/completions");
    const view = await until(emu.url, (v) => v.realWork && v.waiting > 0);
    expect(view).toMatchObject({ realWork: true });
    expect(emu.clock.now() - before).toBeLessThan(330_000);
    const text = await call.resume();
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain("data: [DONE]");
  });
});
