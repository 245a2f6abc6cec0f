import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { inProcess } from "../support/in-process.js";
import { forStarts, startCli } from "../support/cli.js";
import { rawExchange } from "../support/raw-http.js";

const CONTROL_KEY = "ck-planted-control-key-51be0c";

/** The first IPv4 address of this machine that is not loopback, if it has one. */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

describe("network exposure", () => {
  it("listens on 127.0.0.1 unless told otherwise", async () => {
    const emu = await createEmulator({ port: 0, config: { endpoints: [{ id: "echo" }] } });
    try {
      expect(emu.host).toBe("127.0.0.1");
      expect(emu.url).toBe(`http://127.0.0.1:${emu.port}`);
      const outside = externalAddress();
      if (outside) {
        const reached = await new Promise<boolean>((resolve) => {
          const s = connect(emu.port, outside, () => (s.destroy(), resolve(true)));
          s.on("error", () => resolve(false));
        });
        expect(reached, `port ${emu.port} reachable on ${outside}`).toBe(false);
      }
    } finally {
      await emu.close();
    }
  });

  it("warns at start when bound beyond loopback with no API keys, and not on loopback", async () => {
    const open = await startCli(["--host", "0.0.0.0", "--clock", "manual"]);
    try {
      await open.stderrContains("WARNING");
      expect(open.stderr()).toContain("WARNING: minipod is listening on 0.0.0.0");
      expect(open.stderr()).toContain("no API keys are configured");
    } finally {
      expect(await open.stop()).toBe(0);
    }
    const local = await startCli(["--clock", "manual"]);
    try {
      expect(local.stderr()).not.toContain("WARNING");
    } finally {
      await local.stop();
    }
  }, forStarts(2));
});

describe("controlKey guards /_emulator/*", () => {
  it("answers 401 problem+json without the key, and serves with it in either header", async () => {
    const e = await inProcess({ config: { controlKey: CONTROL_KEY, endpoints: [{ id: "echo" }] } });
    try {
      const attempts: Array<Record<string, string>> = [{}, { authorization: "Bearer wrong-key" }, { "x-minipod-control-key": "wrong" }];
      for (const headers of attempts) {
        const res = await e.request("GET", "/_emulator/clock", undefined, { authorization: "", ...headers });
        expect(res.status).toBe(401);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect(res.headers.get("www-authenticate")).toContain("Bearer");
        expect(res.body).toMatchObject({ title: "Unauthorized", status: 401, detail: expect.stringMatching(/control key/) });
        expect(res.text).not.toContain(CONTROL_KEY);
      }
      const reset = await e.request("POST", "/_emulator/reset", {}, { authorization: "" });
      expect(reset.status).toBe(401);
      expect((await e.get("/_emulator/clock", { authorization: `Bearer ${CONTROL_KEY}` })).status).toBe(200);
      expect((await e.get("/_emulator/clock", { "x-minipod-control-key": CONTROL_KEY })).status).toBe(200);
      // The service routes still take API keys, not the control key.
      expect((await e.get("/v2/echo/health")).status).toBe(200);
    } finally {
      e.close();
    }
  });

  it("guards the dashboard too: /?key= unlocks it with a cookie its own requests carry", async () => {
    const e = await inProcess({ config: { controlKey: CONTROL_KEY, endpoints: [{ id: "echo" }] } });
    try {
      // The page at / is not sent the cookie: a browser without a key is led to /_dashboard, where it is.
      const led = await e.request("GET", "/", undefined, { authorization: "" });
      expect(led.status).toBe(303);
      expect(led.headers.get("location")).toBe("/_dashboard");
      const locked = await e.request("GET", "/_dashboard", undefined, { authorization: "" });
      expect(locked.status).toBe(401);
      expect(locked.body.detail).toMatch(/open \/\?key=<controlKey> once/);
      expect((await e.request("GET", "/?key=wrong", undefined, { authorization: "" })).status).toBe(401);
      expect((await e.request("GET", "/_dashboard/panels/faults", undefined, { authorization: "" })).status).toBe(401);

      const unlock = await e.request("GET", `/?key=${CONTROL_KEY}`, undefined, { authorization: "" });
      expect(unlock.status).toBe(303);
      expect(unlock.headers.get("location")).toBe("/_dashboard");
      // One cookie named after the port, for each path that needs it: never sent to /v2, /lb or another port's minipod.
      const cookies = unlock.headers.getSetCookie();
      expect(cookies).toEqual([
        `minipod_control_key_80=${CONTROL_KEY}; Path=/_emulator; HttpOnly; SameSite=Strict`,
        `minipod_control_key_80=${CONTROL_KEY}; Path=/_dashboard; HttpOnly; SameSite=Strict`,
      ]);
      const jar = { authorization: "", cookie: cookies[0]!.split(";")[0]! };
      expect((await e.request("GET", "/_dashboard", undefined, jar)).status).toBe(200);
      // Another port's cookie, or the unsuffixed name of earlier releases, is no key here.
      for (const other of [`minipod_control_key_8081=${CONTROL_KEY}`, `minipod_control_key=${CONTROL_KEY}`]) {
        expect((await e.request("GET", "/_emulator/clock", undefined, { authorization: "", cookie: other })).status).toBe(401);
      }
      expect((await e.request("GET", "/_emulator/clock", undefined, jar)).status).toBe(200);
      // Panels that read other control routes in-process pass the key on: no "401" inside.
      const panel = await e.request("GET", "/_dashboard/panels/faults", undefined, jar);
      expect(panel.status).toBe(200);
      expect(panel.text).not.toMatch(/401|not available/);
    } finally {
      e.close();
    }
  });

  it("leaves /_emulator open when no controlKey is configured", async () => {
    const e = await inProcess({ config: { endpoints: [{ id: "echo" }] } });
    try {
      expect((await e.request("GET", "/_emulator/clock", undefined, { authorization: "" })).status).toBe(200);
    } finally {
      e.close();
    }
  });
});

describe("size limits hold before parsing", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await createEmulator({ port: 0, clock: "manual", config: { rateLimits: { enabled: false }, endpoints: [{ id: "echo", workersMin: 1 }] } });
  });
  afterAll(() => emu.close());

  it("refuses oversized headers with 431 and keeps serving", async () => {
    const head = `GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nX-Filler: ${"a".repeat(64 * 1024)}\r\nConnection: close\r\n\r\n`;
    expect(await rawExchange(emu.port, head)).toMatch(/^HTTP\/1\.1 431 /);
    const ok = await fetch(`${emu.url}/v2/echo/health`, { headers: { authorization: "Bearer k" } });
    expect(ok.status).toBe(200);
  });

  it("answers 413 from the declared Content-Length alone, before any body byte is read", async () => {
    const head = `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024 * 1024}\r\nConnection: close\r\n\r\n`;
    const answer = await rawExchange(emu.port, head, '{"input":');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain("content-type: application/problem+json");
    expect(answer).toContain('"status":413');
  });

  it("stops reading a chunked body as soon as it passes the limit", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${emu.url}/v2/echo/run`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      req.write('{"input":{"pad":"');
      let sent = 0;
      const pump = () => {
        // 40 MB at most; the answer comes after about 10.
        while (sent < 40 && req.write(chunk)) sent++;
        if (sent < 40) req.once("drain", () => (sent++, pump()));
        else req.end('"}}');
      };
      pump();
    });
    expect(status).toBe(413);
  });
});

const SECRETS = {
  apiKey: "sk-planted-api-key-7f3a9c21",
  s3Secret: "s3-planted-access-secret-9d2e44",
  registryPassword: "reg-planted-password-33c1aa",
  wrongKey: "sk-planted-wrong-key-0b7d12",
  controlKey: CONTROL_KEY,
};

/**
 * Drives every surface with planted secrets (API key, wrong key, control key, s3Config secret,
 * registry password) and returns every response (status line, headers, body) and log line.
 */
async function plantedRun(db: string | undefined, withExport: boolean): Promise<{ seen: string[]; logs: string[] }> {
  const { apiKey, s3Secret, registryPassword, wrongKey } = SECRETS;
  const logs: string[] = [];
  const emu = await createEmulator({
    port: 0,
    clock: "manual",
    ...(db ? { db } : {}),
    logLevel: "debug",
    log: (line) => logs.push(line),
    config: {
      controlKey: CONTROL_KEY,
      auth: { keys: [{ key: apiKey }] },
      rateLimits: { enabled: false },
      endpoints: [
        { id: "echo", handler: "echo", workersMin: 1 },
        { id: "script", handler: "scripted", workersMin: 1 },
      ],
    },
  });
  const seen: string[] = [];
  const call = async (method: string, path: string, body?: unknown, key: string = path.startsWith("/_emulator") ? CONTROL_KEY : apiKey) => {
    const res = await fetch(`${emu.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    seen.push(`${method} ${path} ${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n${bytes.toString("latin1")}`);
    return { status: res.status, json: () => JSON.parse(bytes.toString("utf8")) as any };
  };
  try {
    const s3Config = { accessId: "AKIA-planted", accessSecret: s3Secret, bucketName: "b", endpointUrl: "http://127.0.0.1:9/s3" };
    const run = (await call("POST", "/v2/echo/run", { input: { x: 1 }, s3Config })).json();
    await call("POST", "/v2/echo/runsync", { input: { y: 2 }, s3Config });
    const failing = (await call("POST", "/v2/script/run", { input: { fail: "boom" }, s3Config })).json();
    await emu.clock.advance(0);
    for (const path of [`/v2/echo/status/${run.id}`, `/v2/echo/stream/${run.id}`, "/v2/echo/health", `/v2/script/status/${failing.id}`]) await call("GET", path);
    await call("POST", `/v2/script/retry/${failing.id}`, {});
    await call("POST", "/v2/echo/run", { input: {}, s3Config: { ...s3Config, accessSecret: 42 } });
    await call("GET", "/v2/echo/health", undefined, wrongKey);
    await call("GET", "/_emulator/clock", undefined, wrongKey);
    const auth = (await call("POST", "/v1/containerregistryauth", { name: "r", username: "u", password: registryPassword })).json();
    await call("GET", "/v1/containerregistryauth");
    await call("GET", `/v1/containerregistryauth/${auth.id}`);
    const registry = (await call("POST", "/v2/registries", { name: "r2", username: "u", password: registryPassword })).json();
    await call("GET", "/v2/registries");
    await call("GET", `/v2/registries/${registry.id}`);
    const tpl = (await call("POST", "/v2/templates", { name: "private", image: "me/private:1", registry: registry.id })).json();
    await call("POST", "/v2/pods", { name: "p", templateId: tpl.id, gpu: { id: "NVIDIA L4" } });
    await call("GET", "/v2/pods");
    const control = ["/_emulator/jobs", `/_emulator/jobs/${run.id}`, `/_emulator/jobs/${run.id}/events`, "/_emulator/requests", "/_emulator/webhooks", "/_emulator/endpoints"];
    if (withExport) control.push("/_emulator/export");
    for (const path of control) await call("GET", path);
    await call("POST", "/_emulator/snapshots/s1", {});
    await call("GET", "/_emulator/snapshots");
    await call("GET", "/_emulator/snapshots/s1");
    await call("GET", "/openapi.json");
    await call("GET", "/");
  } finally {
    await emu.close();
  }
  return { seen, logs };
}

function expectNoSecrets(seen: string[], logs: string[]): void {
  expect(seen.filter((s) => / 5\d\d$/.test(s.split("\n")[0]!)).map((s) => s.split("\n")[0]), "5xx answers").toEqual([]);
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(seen.filter((s) => s.includes(secret)).map((s) => s.split("\n")[0]), `${name} in a response`).toEqual([]);
    expect(logs.filter((l) => l.includes(secret)), `${name} in a log line`).toEqual([]);
  }
  expect(logs.length).toBeGreaterThan(10);
}

describe("secrets", () => {
  it("appear in no response (export and snapshot images included) and no log line", async () => {
    const { seen, logs } = await plantedRun(undefined, true);
    expect(seen.some((s) => s.startsWith("GET /_emulator/export 200"))).toBe(true);
    expectNoSecrets(seen, logs);
  });

  it("on a file database too, and the emulator's own keys never reach the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-secrets-"));
    const db = join(dir, "state.db");
    try {
      const { seen, logs } = await plantedRun(db, true);
      expect(seen.some((s) => s.startsWith("GET /_emulator/export 200"))).toBe(true);
      expectNoSecrets(seen, logs);
      // The file keeps what a handler needs after a restart (s3Config as given, like the registry
      // password the store keeps), but never an API key or the control key.
      const file = Buffer.concat([db, `${db}-wal`].filter(existsSync).map((f) => readFileSync(f)));
      expect(file.length).toBeGreaterThan(0);
      for (const secret of [SECRETS.apiKey, SECRETS.wrongKey, CONTROL_KEY]) expect(file.includes(secret), `${secret} in the database file`).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
