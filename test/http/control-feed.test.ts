import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmulator } from "../../src/compose/emulator.js";
import { FEED_BUFFER_MAX } from "../../src/http/routes/control/feed.js";
import { inProcess, type InProcess } from "../support/in-process.js";

const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 1, coldStartMs: 0 },
    { id: "held", handler: "echo", workersMin: 0, workersMax: 0 },
  ],
};

interface SseEvent {
  event: string;
  data: any;
}

/** Reads a text/event-stream body event by event. */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const next = async (): Promise<SseEvent> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n");
        return { event, data: JSON.parse(data) };
      }
      const { done, value } = await reader.read();
      if (done) throw new Error("feed ended");
      buffer += decoder.decode(value, { stream: true });
    }
  };
  /** Resolves when the server ends the stream (after any events left). */
  const ended = async (): Promise<boolean> => {
    for (;;) {
      const { done } = await reader.read();
      if (done) return true;
    }
  };
  return { next, ended, cancel: () => reader.cancel() };
}

describe("GET /_emulator/feed", () => {
  let e: InProcess;
  let listeners: number;
  beforeEach(async () => {
    e = await inProcess({ config });
    // Count live subscriptions, to see the feed let go of the notifier.
    listeners = 0;
    const onAny = e.core.notifier.onAny.bind(e.core.notifier);
    e.core.notifier.onAny = (fn) => {
      listeners++;
      const off = onAny(fn);
      return () => {
        listeners--;
        return off();
      };
    };
  });
  afterEach(() => e.close());

  const open = async () => {
    const res = await e.app.request("http://minipod.test/_emulator/feed");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    return sseReader(res.body!);
  };

  it("announces each job change with its cause, then lets go when the reader leaves", async () => {
    const feed = await open();
    expect(await feed.next()).toEqual({ event: "ready", data: { now: e.now() } });
    expect(listeners).toBe(1);

    const run = await e.post("/v2/held/run", { input: { x: 1 } });
    const submitted = await feed.next();
    expect(submitted).toEqual({
      event: "job",
      data: {
        id: run.body.id,
        endpointId: "held",
        to: "IN_QUEUE",
        cause: "submitted with /run",
        at: e.now(),
        job: expect.objectContaining({ id: run.body.id, status: "IN_QUEUE", endpointId: "held" }),
      },
    });
    expect(JSON.stringify(submitted.data)).not.toContain('"x"');

    await e.post(`/v2/held/cancel/${run.body.id}`);
    expect((await feed.next()).data).toMatchObject({ id: run.body.id, from: "IN_QUEUE", to: "CANCELLED", cause: "cancelled while queued" });

    await e.advance(30 * 60_000); // the cancelled job's result retention ends: it is deleted
    const deleted = (await feed.next()).data;
    expect(deleted).toMatchObject({ id: run.body.id, from: "CANCELLED", cause: "result retention ended" });
    expect(deleted).not.toHaveProperty("to");
    expect(deleted).not.toHaveProperty("job");

    await feed.cancel();
    await new Promise((r) => setImmediate(r));
    expect(listeners).toBe(0);
  });

  it("follows a job through its states to COMPLETED", async () => {
    const feed = await open();
    await feed.next();
    const run = await e.post("/v2/echo/run", { input: {} });
    await e.advance(0);
    const seen: string[] = [];
    for (;;) {
      const ev = await feed.next();
      if (ev.data.id === run.body.id) seen.push(ev.data.to);
      if (ev.data.to === "COMPLETED") break;
    }
    expect(seen.at(-1)).toBe("COMPLETED");
    await feed.cancel();
  });

  it("asks for a resync instead of buffering without bound when the reader stalls", async () => {
    const feed = await open();
    await feed.next();
    for (let i = 0; i < FEED_BUFFER_MAX + 50; i++) e.core.jobs.submit("held", { input: { i } }, "run");
    const events: string[] = [];
    for (;;) {
      const ev = await feed.next();
      events.push(ev.event);
      if (ev.event === "resync") break;
    }
    // At most the change the stream had already taken, then the resync: nothing else was kept.
    expect(events.length).toBeLessThanOrEqual(2);
    await e.post("/v2/held/run", { input: {} });
    expect((await feed.next()).event).toBe("job");
    await feed.cancel();
  });

  it("sends a resync and ends when the emulator resets, so the page reloads a fresh state", async () => {
    const feed = await open();
    await feed.next();
    await e.core.reset();
    expect((await feed.next()).event).toBe("resync");
    expect(await feed.ended()).toBe(true);
    expect(listeners).toBe(0);
  });
});

describe("the feed and closing the emulator", () => {
  it("does not hold up close() while a dashboard listens", async () => {
    const emu = await createEmulator({ port: 0, clock: "manual", config });
    const res = await fetch(`${emu.url}/_emulator/feed`);
    const feed = sseReader(res.body!);
    expect((await feed.next()).event).toBe("ready");
    const started = performance.now();
    await emu.close();
    // Without the feed ending itself, close() waits 2 s before it cuts open connections.
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await feed.next()).event).toBe("resync");
  });
});
