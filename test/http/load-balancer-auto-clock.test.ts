// A request whose body comes after its headers (as aiohttp sends a JSON post: the headers in one
// write, the body in the next), right after a reset over HTTP, on the auto clock: while the body is
// on its way the clock counts it as real work and does not skip, so the built-in workers answer
// it rather than the 5.5-minute limit. The body is held back by the test until minipod shows the
// request at its worker: no wall time is waited for.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { parseAnswer } from "../support/raw-http.js";

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const AUTH = { authorization: "Bearer k" };
const ROUNDS = 20;
/** The exchange's limit on a load-balancing endpoint: what the clock skipped to. */
const LIMIT_MS = 330_000;

/** A POST whose headers are sent now and whose body once `send()` is called; `answered` once anything came back. */
function headersFirst(port: number, path: string, body: string) {
  let text = "";
  let answered = false;
  let socket!: Socket;
  const connected = new Promise<void>((resolve) => (socket = connect(port, "127.0.0.1", resolve)));
  const answer = new Promise<string>((resolve, reject) => {
    socket.on("data", (d: Buffer) => ((answered = true), (text += d.toString("latin1"))));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  void connected.then(() => socket.write(head));
  return {
    answered: () => answered,
    send: () => socket.write(body),
    answer: answer.then(parseAnswer),
  };
}

async function json(url: string, init?: RequestInit): Promise<Record<string, unknown>> {
  return (await (await fetch(url, init)).json()) as Record<string, unknown>;
}

/** Until the endpoint shows the request in progress at a worker, or an answer came first; by requests to minipod, bounded in number. */
async function atWorker(base: string, endpointId: string, answered: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !answered(); i++) {
    const health = (await json(`${base}/v2/${endpointId}/health`, { headers: AUTH })) as { jobs: { inProgress: number } };
    if (health.jobs.inProgress === 1) return;
  }
}

const reset = async (base: string) => expect(await json(`${base}/_emulator/reset`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).toEqual({ status: "reset" });

describe("the auto clock and a load-balanced request's body still on its way", () => {
  it.each([
    ["echo", "/generate", { p: 1 }, (b: Record<string, unknown>) => expect(b).toMatchObject({ method: "POST", path: "/generate", body: { p: 1 } })],
    [
      "openai",
      "/v1/chat/completions",
      { model: "minipod-llm", messages: [{ role: "user", content: "hi" }] },
      (b: Record<string, unknown>) => expect(b).toMatchObject({ object: "chat.completion" }),
    ],
  ])("the %s worker answers it after each HTTP reset; time does not jump to the 5.5-minute limit meanwhile", async (handler, path, payload, check) => {
    emu = await createEmulator({ clock: "auto", config: { endpoints: [{ id: "ep1", type: "LOAD_BALANCER", handler, workersMin: 1, coldStartMs: 0 }] } });
    for (let round = 0; round < ROUNDS; round++) {
      await reset(emu.url);
      const before = emu.clock.now();
      const call = headersFirst(emu.port, `/lb/ep1${path}`, JSON.stringify(payload));
      await atWorker(emu.url, "ep1", call.answered);
      expect(call.answered(), `round ${round}: answered before its body was sent`).toBe(false);
      // The request waits on minipod's answer, and its body on the client: real work, no skip.
      expect(await json(`${emu.url}/_emulator/clock`)).toMatchObject({ waiting: 1, realWork: true });
      expect(emu.clock.now() - before).toBeLessThan(LIMIT_MS);
      call.send();
      const got = await call.answer;
      expect(got.status, `round ${round}: ${got.body}`).toBe(200);
      check(JSON.parse(got.body) as Record<string, unknown>);
      expect(emu.clock.now() - before).toBeLessThan(LIMIT_MS);
    }
  });

  it("a handler that answers without reading the body leaves no real work behind once its answer ended", async () => {
    const ignoring = () => new Response("not read", { status: 202 });
    emu = await createEmulator({ clock: "auto", config: { endpoints: [{ id: "ep1", type: "LOAD_BALANCER", handler: ignoring, workersMin: 1, coldStartMs: 0 }] } });
    await reset(emu.url);
    // The body never comes: only the headers are sent.
    const call = headersFirst(emu.port, "/lb/ep1/x", JSON.stringify({ never: "sent" }));
    const got = await call.answer;
    expect(got.status).toBe(202);
    expect(got.body).toBe("not read");
    expect(await json(`${emu.url}/_emulator/clock`)).toMatchObject({ waiting: 0, realWork: false });
  });

  it("a queue endpoint with workersMin (and one with a cold start) answers /runsync after each HTTP reset, its body late too", async () => {
    emu = await createEmulator({
      clock: "auto",
      config: {
        endpoints: [
          { id: "q1", handler: "echo", workersMin: 1, coldStartMs: 0 },
          { id: "q2", handler: "echo", workersMin: 1, coldStartMs: 2000 },
        ],
      },
    });
    for (let round = 0; round < ROUNDS; round++) {
      await reset(emu.url);
      for (const id of ["q1", "q2"]) {
        const call = headersFirst(emu.port, `/v2/${id}/runsync`, JSON.stringify({ input: { round } }));
        // The body goes an exchange with minipod after the headers; the queue reads it whole before the job exists.
        expect(await json(`${emu.url}/_emulator/clock`)).toMatchObject({ mode: "auto" });
        call.send();
        const got = await call.answer;
        expect(got.status, `round ${round}: ${got.body}`).toBe(200);
        expect(JSON.parse(got.body)).toMatchObject({ status: "COMPLETED", output: { round } });
      }
    }
  });
});

describe("the auto clock and a queue request's body still on its way", () => {
  /** What completes each path's body after its first byte, `{`. */
  const RESTS: Record<string, string> = {
    "/v1/endpoints": `"name":"n","templateId":"t"}`,
    "/v2/templates": `"name":"t2","imageName":"acme/x:1"}`,
    "/graphql": `"query":"{ myself { id } }"}`,
    "/v2/q/openai/v1/chat/completions": `"model":"m","messages":[{"role":"user","content":"hi"}]}`,
    "/_emulator/endpoints/q/run": `"input":{"p":1}}`,
  };
  const PATHS = ["/v2/q/run", "/v2/q/runsync", "/v1/endpoints", "/v2/templates", "/graphql", "/v2/q/openai/v1/chat/completions", "/_emulator/endpoints/q/run"];
  it.each(PATHS.map((p) => [p]))("POST %s: reading a chunked body held back is real work; the clock does not skip meanwhile", async (path) => {
    emu = await createEmulator({ clock: "auto", config: { endpoints: [{ id: "q", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    let socket!: Socket;
    await new Promise<void>((resolve) => (socket = connect(emu!.port, "127.0.0.1", resolve)));
    let text = "";
    const answer = new Promise<string>((resolve, reject) => {
      socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${emu.port}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\n{\r\n`);
    const before = emu.clock.now();
    // A request waiting on virtual time meanwhile: with no real work, the auto clock would skip for it.
    const sleeping = fetch(`${emu.url}/_emulator/clock/sleep`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ms: 600_000 }) });
    let clock: Record<string, unknown> = {};
    for (let i = 0; i < 200 && !(clock.realWork === true && clock.waiting === 1); i++) clock = await json(`${emu.url}/_emulator/clock`);
    expect(clock).toMatchObject({ waiting: 1, realWork: true });
    expect(emu.clock.now() - before).toBeLessThan(600_000);
    const rest = RESTS[path] ?? `"input":{"p":1}}`;
    socket.write(`${rest.length.toString(16)}\r\n${rest}\r\n0\r\n\r\n`);
    const got = parseAnswer(await answer);
    expect(got.status, got.body).toBeLessThan(500);
    expect(text).not.toBe("");
    await sleeping;
  });

  it("a client that goes away mid-body leaves no real work behind", async () => {
    emu = await createEmulator({ clock: "auto", config: {} });
    let socket!: Socket;
    await new Promise<void>((resolve) => (socket = connect(emu!.port, "127.0.0.1", resolve)));
    socket.on("error", () => {});
    socket.write(`POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${emu.port}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"query"`);
    let clock: Record<string, unknown> = {};
    for (let i = 0; i < 200 && clock.realWork !== true; i++) clock = await json(`${emu.url}/_emulator/clock`);
    expect(clock).toMatchObject({ realWork: true });
    socket.destroy();
    for (let i = 0; i < 200 && clock.realWork !== false; i++) clock = await json(`${emu.url}/_emulator/clock`);
    expect(clock).toMatchObject({ realWork: false });
  });
});
