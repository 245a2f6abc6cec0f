import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RECORDED_DIR, type Recording } from "../support/recording.js";
import { replay } from "./replay.js";

/**
 * The real clients' recorded exchanges (test/contract/recorded/, written by `npm run
 * contracts:record` from the tests that run them), replayed against a fresh minipod in every run:
 * where the clients are not installed (CI), these stand in for them, so a change of minipod that
 * would break the worker runtime, the service's client or the JavaScript SDKs fails here.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const files = readdirSync(RECORDED_DIR)
  .filter((f) => f.endsWith(".json"))
  .sort();
const recordings = files.map((f) => ({ file: f, r: JSON.parse(readFileSync(join(RECORDED_DIR, f), "utf8")) as Recording }));

/**
 * The test files that run a real client, by the client: each must have recordings. A test that
 * runs a real client and has none fails "has a recording for every real-client test" below.
 */
const REAL_CLIENT_TESTS: Record<string, string> = {
  "test/e2e/python-worker.test.ts": "the worker runtime",
  "test/e2e/python-worker-lifecycle.test.ts": "the worker runtime: the stop channel, refresh_worker",
  "test/e2e/python-client.test.ts": "runpod.Endpoint and runpod.AsyncioEndpoint",
  "test/e2e/python-graphql.test.ts": "runpod.api",
  "test/e2e/sdk.test.ts": "runpod-sdk",
  "test/e2e/mcp-rest.test.ts": "@runpod/mcp-server's REST tools",
  "test/e2e/openai-sdk.test.ts": "openai",
  "test/e2e/load-balancer-clients.test.ts": "openai on a load-balancing endpoint's routes, and a worker HTTP server given by URL",
  "test/e2e/flash-sdk.test.ts": "runpod-flash in live provisioning",
  "test/e2e/sdk2-dev.test.ts": "the SDK 2.x's rp flash dev",
  "test/e2e/flash-docs.test.ts": "runpod-flash under docs/flash.md's pytest walk-through",
};

/** What marks a test file as driving a real client. */
const DRIVES_A_CLIENT = /startPyWorker\(|runPyClient\(|flashPython\(|from "runpod-sdk"|@runpod\/mcp-server|from "openai"|FIXTURES, "graphql_api\.py"/;

/**
 * Files that drive a real client but whose exchanges the recordings above already hold, or that
 * test something else through one (timing, the CLI, docs examples), with the reason.
 */
const COVERED_ELSEWHERE: Record<string, string> = {
  "test/e2e/python-batch.test.ts": "batch workers: the worker runtime's exchanges are those of python-worker-*",
  "test/e2e/auto-clock.test.ts": "the auto clock under the worker runtime and client: their exchanges are those of python-worker-* and python-client-*",
  "test/e2e/openai-python-worker.test.ts": "the openai client on a queue endpoint's routes (openai-queue-routes), answered by a Python worker",
  "test/e2e/openai-disconnect.test.ts": "a client disconnecting mid-stream: not an exchange a client accepts",
  "test/e2e/mcp.test.ts": "the MCP server's queue tools: the same routes as runpod-sdk's",
  "test/e2e/mcp-graphql.test.ts": "the MCP server's GraphQL tools: the same operations as python-graphql",
  "test/e2e/management-sdk.test.ts": "runpod-sdk's management calls: the REST v2 surface, checked against the published description",
  "test/e2e/ai-sdk.test.ts": "@runpod/ai-sdk-provider: the openai routes of openai-sdk's scenarios",
  "test/e2e/inline-handlers.test.ts": "handler functions in config, driven by runpod-sdk's run and status: runpod-sdk-* hold those exchanges",
  "test/e2e/programmatic.test.ts": "createEmulator from a program, driven by runpod-sdk: runpod-sdk-* hold those exchanges",
  "test/e2e/webhook-schemes.test.ts": "webhook URLs given through runpod-sdk's run: runpod-sdk-* hold that exchange",
  "test/e2e/sdk2-api.test.ts":
    "the SDK 2.x runs only in minipod's api worker there; the requests are the test's own, as the SDKs send them to https://{id}.{host} (sdk-https.test.ts has the SDKs send them)",
  "test/e2e/sdk-https.test.ts":
    "the SDKs' https calls to https://{id}.{host}: the recorder relays plain HTTP and cannot stand between a TLS client and minipod; the routes' answers are the worker's (sdk2-api.test.ts), the GraphQL operations those of sdk2-flash-dev",
  "test/e2e/flash-deploy.test.ts":
    "runpod-flash's flash deploy: its upload and the worker's fetch of the artifact are a binary tar.gz, which a recording (JSON and text bodies) cannot carry; its GraphQL operations are checked with the clients' texts in test/services/flash-apps/flash-deploy.test.ts",
  "test/e2e/sdk2-deploy.test.ts":
    "the SDK 2.x's rp flash deploy: as runpod-flash's, its upload and the workers' fetch of the artifact are a binary tar.gz, which a recording cannot carry; its GraphQL operations are checked with the clients' texts in test/services/flash-apps/flash-deploy.test.ts, and its calls through /v2/flash reach the queue routes sdk2-flash-dev records",
};

describe("the real clients' recorded exchanges, replayed against a fresh minipod", () => {
  const replayed = new Set<string>();

  for (const { file, r } of recordings) {
    it(`${file}: ${r.client}, ${r.about}`, async () => {
      expect(r.exchanges.length + (r.idle?.length ?? 0)).toBeGreaterThan(0);
      await replay(r);
      replayed.add(file);
    }, 120_000);
  }

  it("replays every recording", () => {
    expect(files.filter((f) => !replayed.has(f))).toEqual([]);
  });

  it("has a recording for every scenario a test declares, and a declaring test for every recording", () => {
    const declared = new Map<string, string>();
    for (const test of Object.keys(REAL_CLIENT_TESTS)) {
      for (const m of readFileSync(join(ROOT, test), "utf8").matchAll(/\.scenario\("([^"]+)"/g)) declared.set(m[1]!, test);
    }
    expect([...declared.keys()].filter((s) => !files.includes(`${s}.json`)).sort(), "scenarios with no recording (npm run contracts:record)").toEqual([]);
    expect(recordings.filter(({ r }) => declared.get(r.scenario) !== r.test).map(({ file }) => file), "recordings no test declares").toEqual([]);
  });

  it("has a recording for every real-client test", () => {
    const tests = readdirSync(join(ROOT, "test/e2e"))
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => `test/e2e/${f}`)
      .filter((f) => DRIVES_A_CLIENT.test(readFileSync(join(ROOT, f), "utf8")));
    expect(tests.filter((t) => !(t in REAL_CLIENT_TESTS) && !(t in COVERED_ELSEWHERE)), "tests of a real client neither recorded nor covered by a recording").toEqual([]);
    expect(Object.keys(REAL_CLIENT_TESTS).filter((t) => !recordings.some(({ r }) => r.test === t)), "real-client tests with no recording").toEqual([]);
  });
});
