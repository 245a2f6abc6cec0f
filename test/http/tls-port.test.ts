import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { blocksOf, shellWords } from "../support/readme.js";

// minipod's port answers TLS beside plain HTTP (src/compose/tls-port.ts): each connection's first
// byte says which. The certificate is of minipod's local authority (src/compose/tls.ts), which a
// client trusts by its file; a load-balancing endpoint's own name gets a leaf of its own.

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Every name resolves to 127.0.0.1, as the Python fixture's resolver makes `{id}.127.0.0.1` do. */
const loopback = (_host: string, _opts: unknown, cb: (err: null, address: string | Array<{ address: string; family: number }>, family?: number) => void) => {
  const all = (_opts as { all?: boolean })?.all;
  return all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4);
};

/**
 * A request to `scheme://host:port/path`, taken apart by hand: WHATWG's URL parser refuses a name
 * whose last label is a number (`ep1.127.0.0.1`), which Python's clients send as it is.
 */
function get(url: string, options: { ca?: string; agent?: HttpAgent | HttpsAgent; method?: string; body?: string } = {}): Promise<Answer> {
  const [, scheme, host, port, path] = /^(https?):\/\/([^:/]+):(\d+)(\/.*)$/.exec(url)!;
  const send = scheme === "https" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host,
        port: Number(port),
        path,
        servername: isIP(host!) ? undefined : host,
        method: options.method ?? "GET",
        ca: options.ca,
        agent: options.agent,
        lookup: loopback as never,
        headers: { authorization: "Bearer k", "content-type": "application/json", host: `${host}:${port}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("TLS on minipod's port", () => {
  let emu: Emulator;
  let dir: string;
  let ca: string;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "minipod-tls-"));
    emu = await createEmulator({
      tls: { dir },
      config: {
        allowedHosts: ["minipod.test"],
        endpoints: [
          { id: "echo", handler: "echo", workersMin: 0 },
          { id: "api", type: "LOAD_BALANCER", handler: "echo" },
          {
            id: "ep1",
            type: "LOAD_BALANCER",
            handler: (req: Request) => new Response(JSON.stringify({ url: req.url, host: req.headers.get("host") }), { headers: { "content-type": "application/json" } }),
          },
        ],
      },
    });
    port = emu.port;
    ca = readFileSync(emu.tls!.caFile, "utf8");
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps its authority in the folder given: the key readable by its owner alone", () => {
    expect(emu.tls!.caFile).toBe(join(dir, "ca", "cert.pem"));
    expect(statSync(join(dir, "ca", "key.pem")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "ca")).mode & 0o777).toBe(0o700);
    const cert = new X509Certificate(ca);
    expect(cert.ca).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: "prime256v1" });
  });

  it("answers plain HTTP and TLS on the same port, through the same routes", async () => {
    const plain = await get(`http://127.0.0.1:${port}/v2/echo/health`);
    const secure = await get(`https://127.0.0.1:${port}/v2/echo/health`, { ca });
    expect(plain.status).toBe(200);
    expect(secure).toMatchObject({ status: 200, body: plain.body });
    const byLocalhost = await get(`https://localhost:${port}/v2/echo/health`, { ca });
    expect(byLocalhost.status).toBe(200);
    // A job submitted over TLS is the same queue's.
    const run = await get(`https://localhost:${port}/v2/echo/runsync`, { ca, method: "POST", body: '{"input":{"n":1}}' });
    expect(JSON.parse(run.body)).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
  });

  it("serves a load-balancing endpoint at https://{id}.{host of the base URL}, as the Python SDKs call it", async () => {
    for (const parent of ["127.0.0.1", "localhost", "minipod.test"]) {
      const res = await get(`https://ep1.${parent}:${port}/hello?x=1`, { ca });
      expect(res.status, `${parent}: ${res.body}`).toBe(200);
      expect(JSON.parse(res.body).url).toMatch(/\/hello\?x=1$/);
    }
    // Plain HTTP by the same name, too.
    expect((await get(`http://ep1.127.0.0.1:${port}/hello`)).status).toBe(200);
  });

  it("refuses, by the Host check, a name under another host, and issues no certificate for it", async () => {
    // The leaf given for a name minipod does not answer is the default one: the client's check fails.
    await expect(get(`https://ep1.evil.example:${port}/hello`, { ca })).rejects.toThrow(/altnames|Hostname/i);
    // An endpoint that does not exist: the name is a subdomain minipod answers for load balancing only.
    const missing = await get(`http://nope.127.0.0.1:${port}/hello`);
    expect(missing.status).toBe(403);
  });

  it("closes a bad handshake and a client that does not trust the authority, and keeps serving", async () => {
    // A byte stream that opens like a TLS record and then is none.
    const closed = await new Promise<string>((resolve) => {
      const s: Socket = netConnect(port, "127.0.0.1", () => s.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5, 6, 7, 8])));
      let got = Buffer.alloc(0);
      s.on("data", (c) => (got = Buffer.concat([got, c])));
      s.on("error", () => {});
      s.on("close", () => resolve(got.length > 0 && got[0] === 0x15 ? "alert" : "closed"));
    });
    expect(["alert", "closed"]).toContain(closed);
    // No CA given: node's default trust refuses minipod's certificate; the server stays up.
    await expect(get(`https://127.0.0.1:${port}/v2/echo/health`)).rejects.toThrow(/self[- ]signed|unable to (get|verify)/i);
    // A TLS client that opens and sends nothing after the handshake, then goes.
    await new Promise<void>((resolve) => {
      const s = tlsConnect({ port, host: "127.0.0.1", ca, servername: "localhost" }, () => s.end(() => resolve()));
    });
    expect((await get(`http://127.0.0.1:${port}/v2/echo/health`)).status).toBe(200);
    expect((await get(`https://127.0.0.1:${port}/v2/echo/health`, { ca })).status).toBe(200);
  });

  it("serves an upgrade it declines (h2c) over TLS as the plain request it also is, the connection kept", async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect({ port, host: "127.0.0.1", ca, servername: "localhost" }, () => {
        const head = "Host: localhost\r\nAuthorization: Bearer k\r\n";
        s.write(`GET /v2/echo/health HTTP/1.1\r\n${head}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAEAAEAAAAIAAAAB\r\n\r\n`);
        s.write(`GET /v2/echo/health HTTP/1.1\r\n${head}Connection: close\r\n\r\n`);
      });
      let got = "";
      s.setEncoding("utf8");
      s.on("data", (c) => (got += c));
      s.on("error", reject);
      s.on("close", () => resolve(got));
    });
    expect(text.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
  });

  it("a keep-alive connection of either kind carries many requests, each sorted once", async () => {
    for (const [scheme, agent] of [
      ["http", new HttpAgent({ keepAlive: true, maxSockets: 1 })],
      ["https", new HttpsAgent({ keepAlive: true, maxSockets: 1, ca })],
    ] as const) {
      const sockets = new Set<unknown>();
      agent.on("free", (s) => sockets.add(s));
      for (let i = 0; i < 20; i++) expect((await get(`${scheme}://127.0.0.1:${port}/v2/echo/health`, { agent, ca })).status).toBe(200);
      expect(sockets.size, scheme).toBe(1);
      agent.destroy();
    }
  });

  it("answers a request whose first bytes come apart, and a request node cannot read, as plain HTTP", async () => {
    const raw = (parts: string[]) =>
      new Promise<string>((resolve) => {
        const s = netConnect(port, "127.0.0.1", async () => {
          for (const p of parts) {
            s.write(p);
            await new Promise((r) => setImmediate(r));
          }
        });
        let got = "";
        s.setEncoding("utf8");
        s.on("data", (c) => {
          got += c;
          if (got.includes("\r\n\r\n")) s.destroy();
        });
        s.on("close", () => resolve(got));
      });
    expect(await raw(["G", "ET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n\r\n"])).toMatch(/^HTTP\/1.1 200/);
    expect(await raw(["\x01\x02 nonsense\r\n\r\n"])).toMatch(/^HTTP\/1.1 400/);
  });
});

describe.skipIf(spawnSync("curl", ["--version"]).status !== 0)("docs/load-balancing.md, Over TLS: curl trusting the authority", () => {
  it("calls the endpoint by its name over https, as the page shows", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-tls-docs-"));
    const emu = await createEmulator({ tls: { dir }, config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "echo" }] } });
    try {
      const [block] = blocksOf("docs/load-balancing.md", "Over TLS", "sh");
      const line = block!.text.trim().replace("~/.local/share/minipod/tls/ca/cert.pem", emu.tls!.caFile).replace(":8080", `:${emu.port}`);
      const [cmd, ...args] = shellWords(line);
      // Not spawnSync: minipod answers from this process's event loop.
      const run = await promisify(execFile)(cmd!, args, { encoding: "utf8", timeout: 30_000 });
      expect(JSON.parse(run.stdout)).toMatchObject({ method: "POST", path: "/generate", body: { prompt: "minipod" } });
    } finally {
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a plain request with TLS on the port", () => {
  it("is as quick on a new connection as with TLS off: the first byte is handed over at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-tls-quick-"));
    const config = { rateLimits: { enabled: false }, endpoints: [{ id: "echo", handler: "echo" }] };
    const [on, off] = [await createEmulator({ tls: { dir }, config }), await createEmulator({ tls: false, config })];
    try {
      const times = { on: [] as number[], off: [] as number[] };
      for (let i = 0; i < 30; i++) {
        for (const [side, emu] of [["on", on], ["off", off]] as const) {
          const start = performance.now();
          // agent: false, a new connection each time: the peek's whole cost is in every request.
          expect((await get(`http://127.0.0.1:${emu.port}/v2/echo/health`, { agent: false as never })).status).toBe(200);
          times[side].push(performance.now() - start);
        }
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      // Alternated, so a loaded machine slows both alike; a peek that waited on a timer would add its delay to each.
      expect(median(times.on)).toBeLessThan(2 * median(times.off) + 5);
    } finally {
      await on.close();
      await off.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("closing with connections not yet sorted", () => {
  it("ends a connection that sent nothing and one inside its handshake, rather than waiting for them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-tls-close-"));
    const emu = await createEmulator({ tls: { dir }, config: { endpoints: [{ id: "echo", handler: "echo" }] } });
    const closed = (s: Socket) => new Promise<void>((resolve) => s.once("close", () => resolve()));
    const silent = netConnect(emu.port, "127.0.0.1");
    const halfway = netConnect(emu.port, "127.0.0.1", () => halfway.write(Buffer.from([0x16, 0x03, 0x01])));
    for (const s of [silent, halfway]) s.on("error", () => {});
    await Promise.all([silent, halfway].map((s) => new Promise((r) => s.once("connect", r))));
    const started = performance.now();
    await emu.close();
    await Promise.all([closed(silent), closed(halfway)]);
    // Well before the 2 s after which close() cuts what the HTTP server knows of, and the 80 s of a silent connection's timeout.
    expect(performance.now() - started).toBeLessThan(1500);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("TLS turned off", () => {
  it("serves plain HTTP alone, and says there is no authority", async () => {
    const emu = await createEmulator({ tls: false, config: { endpoints: [{ id: "echo", handler: "echo" }] } });
    try {
      expect(emu.tls).toBeUndefined();
      expect((await get(`${emu.url}/v2/echo/health`)).status).toBe(200);
      await expect(get(`https://127.0.0.1:${emu.port}/v2/echo/health`)).rejects.toThrow();
    } finally {
      await emu.close();
    }
  });
});
