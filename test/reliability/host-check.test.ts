import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { HostCheck, hostName } from "../../src/http/host-check.js";
import { forStarts, startCli } from "../support/cli.js";
import { parseAnswer, rawExchange } from "../support/raw-http.js";

const config = { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] };

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** One request over a raw socket with exactly this Host header (a browser sends the name of the page's URL). */
async function send(port: number, host: string, method = "GET", path = "/_emulator/jobs", body = "") {
  const head = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  return parseAnswer(await rawExchange(port, head, body));
}

describe("the Host allow-list (DNS rebinding)", () => {
  it("refuses a rebound name on every route with 403 saying how to allow it, and serves minipod's own names", async () => {
    const lines: string[] = [];
    emu = await createEmulator({ clock: "manual", config, logLevel: "warn", log: (l) => lines.push(l) });
    const { port } = emu;
    const job = (await (await fetch(`${emu.url}/v2/echo/run`, { method: "POST", headers: { authorization: "k" }, body: '{"input":{"secret":"s"}}' })).json()) as { id: string };

    const routes: Array<[string, string, string?]> = [
      ["GET", "/_emulator/jobs"],
      ["GET", "/_emulator/export"],
      ["GET", `/_emulator/jobs/${job.id}`],
      ["GET", "/_emulator/feed"],
      ["GET", "/"],
      ["GET", "/openapi.json"],
      ["POST", "/_emulator/reset", "{}"],
      ["POST", "/_emulator/clock/advance", '{"ms":1000}'],
      // The routes with a fast entry too.
      ["GET", `/v2/echo/status/${job.id}`],
      ["POST", "/v2/echo/run", '{"input":{}}'],
      ["POST", "/v2/echo/runsync", '{"input":{}}'],
    ];
    for (const [method, path, body] of routes) {
      const res = await send(port, `evil.example:${port}`, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.headers["content-type"]).toBe("application/problem+json");
      expect(res.headers.connection).toBe("close");
      const problem = JSON.parse(res.body);
      expect(problem).toMatchObject({ title: "Forbidden", status: 403 });
      expect(problem.detail).toContain(`Host 'evil.example:${port}' is not allowed`);
      expect(problem.detail).toContain('start minipod with --allowed-hosts evil.example or add "evil.example" to allowedHosts in the config');
      expect(res.body).not.toContain('"secret"');
    }
    // Nothing refused reached the app: no job made, no reset, no clock moved, nothing journaled.
    expect(emu.requests().requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v2/echo/run"]);
    expect(emu.clock.now()).toBe((await (await fetch(`${emu.url}/_emulator/clock`)).json() as { now: number }).now);
    const refusedLines = lines.filter((l) => l.includes("refused"));
    expect(refusedLines).toHaveLength(1);
    expect(refusedLines[0]).toMatch(/warn +refused GET \/_emulator\/jobs: Host 'evil\.example:\d+' is not allowed/);

    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`, `[::1]:${port}`, "localhost", "127.0.0.1"]) {
      expect((await send(port, host)).status, host).toBe(200);
    }
    for (const host of [`10.0.0.1:${port}`, `localhost.evil.example:${port}`, `127.0.0.1.nip.io:${port}`, "", "a b", `evil.example:${port}@127.0.0.1`]) {
      expect((await send(port, host)).status, host).toBe(403);
    }
    // Requests made in-process never came from a browser: app.request is not checked.
    expect((await emu.app.request("http://evil.example/_emulator/clock")).status).toBe(200);
  });

  it("serves the names of allowedHosts, a leading dot allowing a domain and its subdomains, and \"all\" turns it off", async () => {
    emu = await createEmulator({ config: { ...config, allowedHosts: ["MiniPod.Test", ".corp.example"] } });
    const ok = ["minipod.test", "minipod.test:80", "corp.example", "a.corp.example:1", "b.a.corp.example"];
    for (const host of ok) expect((await send(emu.port, host)).status, host).toBe(200);
    for (const host of ["evil.example", "corp.example.evil", "xcorp.example", "minipod.test.evil"]) expect((await send(emu.port, host)).status, host).toBe(403);
    await emu.close();

    emu = await createEmulator({ config: { ...config, allowedHosts: ["one.test"] }, allowedHosts: ["two.test"] });
    expect((await send(emu.port, "one.test")).status).toBe(200);
    expect((await send(emu.port, "two.test")).status).toBe(200);
    await emu.close();

    emu = await createEmulator({ config, allowedHosts: "all" });
    expect((await send(emu.port, "evil.example")).status).toBe(200);
    await expect(createEmulator({ allowedHosts: ["bad host"] })).rejects.toThrow(/allowedHosts: /);
    await expect(createEmulator({ config: { allowedHosts: ["evil.example:80"] } })).rejects.toThrow(/allowedHosts\[0\]: expected a host name/);
  });

  it("bound to every interface, serves any IP address and still refuses names", async () => {
    emu = await createEmulator({ host: "0.0.0.0", config });
    expect((await send(emu.port, `192.168.1.23:${emu.port}`)).status).toBe(200);
    expect((await send(emu.port, `[fe80::1]:${emu.port}`)).status).toBe(200);
    expect((await send(emu.port, "127.0.0.1")).status).toBe(200);
    expect((await send(emu.port, `evil.example:${emu.port}`)).status).toBe(403);
  });

  it("takes --allowed-hosts and MINIPOD_ALLOWED_HOSTS on the command line, and names a bad one", async () => {
    const cli = await startCli(["--clock", "manual", "--allowed-hosts", "dev.example, .lan.example"]);
    try {
      const port = Number(new URL(cli.url).port);
      expect((await send(port, "dev.example")).status).toBe(200);
      expect((await send(port, "box.lan.example")).status).toBe(200);
      expect((await send(port, "evil.example")).status).toBe(403);
    } finally {
      await cli.stop();
    }
    const env = await startCli(["--clock", "manual"], { MINIPOD_ALLOWED_HOSTS: "env.example" });
    try {
      expect((await send(Number(new URL(env.url).port), "env.example")).status).toBe(200);
    } finally {
      await env.stop();
    }
    await expect(startCli(["--allowed-hosts", "evil.example:8080"])).rejects.toThrow(/--allowed-hosts must list host names without ports/);
  }, forStarts(3));
});

describe("HostCheck", () => {
  it("reads the name of a Host header", () => {
    expect(hostName("Example.Test:8080")).toBe("example.test");
    expect(hostName("[::1]:80")).toBe("[::1]");
    expect(hostName("[::1]")).toBe("[::1]");
    expect(hostName("127.0.0.1")).toBe("127.0.0.1");
    for (const bad of ["", "a b", "a:b:c", "::1", "a@b", "a/b", "[zz]", "host:999999"]) expect(hostName(bad), bad).toBeUndefined();
  });

  it("allows minipod's own names on loopback, any address only when bound to all, and a bound name", () => {
    const loop = new HostCheck({ bound: "127.0.0.1", allowed: [] });
    expect(["localhost:1", "127.0.0.1", "[::1]:9"].map((h) => loop.allows(h))).toEqual([true, true, true]);
    expect(["10.0.0.1", "evil.example", "127.0.0.2"].map((h) => loop.allows(h))).toEqual([false, false, false]);
    expect(loop.allows(undefined)).toBe(true);
    const v6 = new HostCheck({ bound: "::", allowed: [] });
    expect(["[fd00::1]:80", "10.1.2.3", "evil.example"].map((h) => v6.allows(h))).toEqual([true, true, false]);
    const named = new HostCheck({ bound: "devbox.lan", allowed: [] });
    expect(["devbox.lan:8080", "DEVBOX.LAN", "other.lan"].map((h) => named.allows(h))).toEqual([true, true, false]);
    const fixed = new HostCheck({ bound: "192.168.1.5", allowed: [] });
    expect(["192.168.1.5:8080", "192.168.1.6"].map((h) => fixed.allows(h))).toEqual([true, false]);
  });
});
