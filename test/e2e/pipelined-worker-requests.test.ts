import { connect, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { FakeWall } from "../support/fake-wall.js";

// minipod's own job loop sends a job's result and its next job-take in one write (HTTP/1.1
// pipelining on its kept connection). The answers go out in the order of the requests, and the
// job-take is handled once the result has been (its answer's turn), through the fast entries as
// through the app (a fault rule armed leaves every request to the app).

const CONFIG = { auth: { keys: [{ key: "k" }] }, endpoints: [{ id: "ext", handler: "external" as const }] };
const KEY = { authorization: "Bearer k", "content-type": "application/json" };
const NOWHERE = { endpoint: "elsewhere", fault: { type: "latency" as const, ms: 1 } };

interface Answer {
  status: number;
  body: string;
}

/** One kept connection, raw: bytes written as given, answers read one by one (Content-Length bodies). */
class Connection {
  private buffered = "";
  private waiting: (() => void) | undefined;
  private constructor(private readonly socket: Socket) {
    socket.on("data", (d: Buffer) => {
      this.buffered += d.toString("latin1");
      this.waiting?.();
    });
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new Connection(socket)));
      socket.once("error", reject);
    });
  }

  write(...requests: string[]): void {
    this.socket.write(requests.join(""));
  }

  /** The next whole answer, or undefined while it has not all arrived. */
  private next(): Answer | undefined {
    const end = this.buffered.indexOf("\r\n\r\n");
    if (end === -1) return undefined;
    const head = this.buffered.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.buffered.length < end + 4 + length) return undefined;
    const body = this.buffered.slice(end + 4, end + 4 + length);
    this.buffered = this.buffered.slice(end + 4 + length);
    return { status: Number(head.split(" ")[1]), body };
  }

  async answer(): Promise<Answer> {
    for (;;) {
      const got = this.next();
      if (got) return got;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Whether an answer has arrived whole, after the server has had `turns` turns of its loop. */
  async pending(turns = 20): Promise<boolean> {
    for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
    return this.buffered.length > 0;
  }

  close(): void {
    this.socket.destroy();
  }
}

const take = (inProgress: 0 | 1) => `GET /v2/ext/job-take/w1?gpu=minipod&job_in_progress=${inProgress} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n\r\n`;
const done = (jobId: string, output: unknown) => {
  const body = JSON.stringify({ output });
  return `POST /v2/ext/job-done/w1/${jobId}?gpu=minipod&isStream=false HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

describe("a worker's job-done and job-take sent in one write", () => {
  let emu: Emulator;
  let conn: Connection | undefined;
  const wall = new FakeWall();

  beforeAll(async () => {
    emu = await createEmulator({ port: 0, clock: { mode: "manual", wall }, config: CONFIG, log: () => {} });
  });
  afterEach(() => {
    conn?.close();
    conn = undefined;
    emu.faults.clear();
  });
  afterAll(async () => {
    await emu.close();
  });

  const submit = async (n: number) => {
    const res = await fetch(`${emu.url}/v2/ext/run`, { method: "POST", headers: KEY, body: JSON.stringify({ input: { n } }) });
    return ((await res.json()) as { id: string }).id;
  };
  const status = async (id: string) => ((await (await fetch(`${emu.url}/v2/ext/status/${id}`, { headers: KEY })).json()) as { status: string; output?: unknown });
  const port = () => Number(new URL(emu.url).port);

  /** A job taken by worker w1 on a connection of its own. */
  const taken = async (n: number) => {
    const id = await submit(n);
    conn = await Connection.open(port());
    conn.write(take(0));
    const got = await conn.answer();
    expect(got.status).toBe(200);
    expect((JSON.parse(got.body) as { id: string }).id).toBe(id);
    return id;
  };

  for (const through of ["the fast entries", "the app"] as const) {
    it(`answers in request order, the next job once it is queued (${through})`, async () => {
      const first = await taken(1);
      if (through === "the app") emu.faults.add(NOWHERE);
      conn!.write(done(first, { n: 1 }), take(1));
      const ack = await conn!.answer();
      expect(ack).toEqual({ status: 200, body: JSON.stringify({ id: first, status: "COMPLETED" }) });
      // No job queued: the job-take is held.
      expect(await conn!.pending()).toBe(false);
      const second = await submit(2);
      const next = await conn!.answer();
      expect(next.status).toBe(200);
      expect((JSON.parse(next.body) as { id: string }).id).toBe(second);
      expect(await status(first)).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
      expect((await status(second)).status).toBe("IN_PROGRESS");
      // The journal has them in the order they were sent.
      const worker = emu.requests({ endpoint: "ext" }).requests.filter((r) => r.path.includes("/job-"));
      expect(worker.slice(-2).map((r) => [r.path.split("/")[3], r.status])).toEqual([
        ["job-done", 200],
        ["job-take", 200],
      ]);
      conn!.write(done(second, { n: 2 }));
      expect((await conn!.answer()).status).toBe(200);
    });
  }

  it("a job-take behind a job-done is handled once the result is: one saying it holds no job does not send the job just finished back to the queue", async () => {
    const first = await taken(3);
    const second = await submit(4);
    conn!.write(done(first, { n: 3 }), take(0));
    expect(await conn!.answer()).toEqual({ status: 200, body: JSON.stringify({ id: first, status: "COMPLETED" }) });
    const next = await conn!.answer();
    expect((JSON.parse(next.body) as { id: string }).id).toBe(second);
    expect(await status(first)).toMatchObject({ status: "COMPLETED", output: { n: 3 } });
    conn!.write(done(second, { n: 4 }));
    expect((await conn!.answer()).status).toBe(200);
  });

  it("a job-take whose connection closes before its turn is not handled: no job is handed to it", async () => {
    conn = await Connection.open(port());
    // The first is held (no job queued); the second waits for its turn behind it.
    conn.write(take(0), take(0));
    expect(await conn.pending()).toBe(false);
    conn.close();
    conn = undefined;
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    const id = await submit(5);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect((await status(id)).status).toBe("IN_QUEUE");
  });
});
