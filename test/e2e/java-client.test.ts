import { execFile, spawnSync } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/**
 * A Java client, java.net.http.HttpClient with its defaults, which asks every HTTP/1.1 request on
 * http:// to upgrade to h2c (`Connection: Upgrade, HTTP2-Settings`): minipod ignores the upgrade
 * and answers each request as HTTP/1.1, on the queue's fast routes, through Hono, and on a
 * load-balancing endpoint (a worker given by URL, a body without a length). Debian's OpenJDK
 * (`apt-get install default-jdk-headless`) runs the single-file source `java/MinipodClient.java`.
 */
const CLIENT = fileURLToPath(new URL("./java/MinipodClient.java", import.meta.url));
const java = spawnSync("java", ["-version"], { encoding: "utf8" });
const missing = java.error ? "java is not installed (apt-get install default-jdk-headless)" : java.status !== 0 ? `java -version failed: ${java.stderr}` : undefined;
if (missing !== undefined) {
  if (process.env.CI === "true") throw new Error(`${missing}; .ci/run installs default-jdk-headless`);
  console.warn(`Java client tests skipped: ${missing}`);
}

let emu: Emulator;
let worker: Server;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  if (missing !== undefined) return;
  worker = createServer((req, res) => {
    if (req.url === "/ping") return void res.writeHead(200).end("ok");
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url, body }));
    });
  });
  await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
  emu = await createEmulator({
    config: {
      endpoints: [
        { id: "echo", handler: "echo" },
        { id: "node", type: "LOAD_BALANCER", handler: `http://127.0.0.1:${(worker.address() as AddressInfo).port}` },
      ],
    },
  });
});
afterAll(async () => {
  await emu?.close();
  worker?.closeAllConnections();
  await new Promise<void>((r) => (worker ? worker.close(() => r()) : r()));
});

/** The Java client's answers to `requests` ("METHOD PATH [BODY]"), one line each: status, protocol, body. */
async function javaClient(...requests: string[]): Promise<Array<{ status: number; version: string; body: unknown }>> {
  const { stdout } = await promisify(execFile)("java", [CLIENT, emu.url, ...requests], { encoding: "utf8", timeout: 60_000 });
  return stdout
    .trim()
    .split("\n")
    .map((line) => {
      const [status, version, ...body] = line.split(" ");
      return { status: Number(status), version: version!, body: JSON.parse(body.join(" ")) as unknown };
    });
}

describe.skipIf(missing !== undefined)("java.net.http.HttpClient with its defaults (an h2c upgrade on every request)", () => {
  it("gets every answer over HTTP/1.1: health, a job run and read back, a load-balancing endpoint's worker", { timeout: 90_000 }, async () => {
    const [health, run, lb, after] = await javaClient("GET /v2/echo/health", 'POST /v2/echo/runsync {"input":{"from":"java"}}', 'POST /lb/node/x ~{"chunked":true}', "GET /v2/echo/health");
    expect(health).toMatchObject({ status: 200, version: "HTTP_1_1", body: { jobs: { completed: 0 } } });
    expect(run).toMatchObject({ status: 200, version: "HTTP_1_1", body: { status: "COMPLETED", output: { from: "java" } } });
    expect(lb).toMatchObject({ status: 200, version: "HTTP_1_1", body: { path: "/x", body: '{"chunked":true}' } });
    expect(after).toMatchObject({ status: 200, body: { jobs: { completed: 1 } } });
    // The worker got a plain request: the upgrade was the client's connection's, not passed on.
    expect(seen.at(-1)!.upgrade).toBeUndefined();
    expect(seen.at(-1)!["http2-settings"]).toBeUndefined();
    // Each request was journaled as the client sent it.
    expect(emu.requests({ endpoint: "echo" }).requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      "GET /v2/echo/health 200",
      "POST /v2/echo/runsync 200",
      "GET /v2/echo/health 200",
    ]);
  });
});
