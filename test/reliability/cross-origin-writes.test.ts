import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { parseAnswer, rawExchange } from "../support/raw-http.js";

/**
 * The rule every request passes on minipod's socket, before any route (the fast ones of `/run`
 * and of load-balancing endpoints included): a request that may change state (any method but
 * GET, HEAD and OPTIONS) sent by a browser page of another origin is refused unless it carries
 * what such a page can only send after a CORS preflight minipod never grants (an Authorization
 * header, a Content-Type other than a form's or text/plain). Over raw sockets, so that the exact
 * headers a browser sends are what minipod reads.
 */
let emu: Emulator;
let lbCalls = 0;
let jobId = "";
const KEY = "k";

beforeAll(async () => {
  emu = await createEmulator({
    clock: "manual",
    config: {
      endpoints: [
        { id: "echo", handler: "echo", workersMin: 0, workersMax: 0 },
        { id: "llm", handler: "openai", workersMin: 0, workersMax: 0 },
        { id: "lb", type: "LOAD_BALANCER", workersMin: 1, coldStartMs: 0, handler: () => ((lbCalls += 1), new Response("worker")) },
      ],
    } as never,
  });
  await emu.clock.advance(0);
  const run = await fetch(`${emu.url}/v2/echo/run`, { method: "POST", headers: { authorization: KEY }, body: '{"input":{}}' });
  jobId = ((await run.json()) as { id: string }).id;
});
afterAll(async () => {
  await emu?.close();
});

async function send(method: string, path: string, headers: Record<string, string>, body = "", host = `127.0.0.1:${emu.port}`) {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`, "Connection: close"];
  return parseAnswer(await rawExchange(emu.port, `${lines.join("\r\n")}\r\n\r\n`, body));
}

const mutation = (q: string) => JSON.stringify({ query: q });

/** Every kind of write minipod takes: queue, batch, OpenAI, REST v1 and v2, GraphQL, control, load balancing. */
const WRITES = (): Array<[string, string, string, string?]> => [
  ["POST", "/v2/echo/run", '{"input":{"planted":true}}'],
  ["POST", "/v2/echo/runsync", '{"input":{"planted":true}}'],
  ["POST", `/v2/echo/cancel/${jobId}`, ""],
  ["POST", `/v2/echo/job-done/w-evil/${jobId}`, '{"output":"planted"}'],
  ["POST", `/v2/echo/job-stream/w-evil/${jobId}`, '{"output":"planted"}'],
  ["POST", "/v2/echo/purge-queue", ""],
  ["POST", "/v2/echo/batch", "[]"],
  ["POST", "/v2/llm/openai/v1/chat/completions", '{"model":"m","messages":[{"role":"user","content":"hi"}]}'],
  ["POST", "/v1/templates", '{"name":"evil","imageName":"evil/miner:latest"}'],
  ["POST", "/v2/templates", '{"name":"evil2","imageName":"evil/miner:latest"}'],
  ["POST", "/v2/registries", '{"name":"r","username":"u","password":"p"}'],
  ["DELETE", "/v1/endpoints/echo", ""],
  ["POST", `/graphql?api_key=x`, mutation('mutation { deleteEndpoint(id: "echo") }')],
  ["POST", `/graphql?api_key=x`, mutation('mutation { saveTemplate(input: { name: "evil3", imageName: "evil/miner:latest" }) { id } }')],
  ["POST", `/graphql?api_key=x`, mutation('mutation { saveRegistryAuth(input: { name: "r2", username: "u", password: "p" }) { id } }')],
  ["POST", "/_emulator/reset", "{}"],
  ["POST", "/_emulator/clock/advance", '{"ms":3600000}'],
  ["POST", "/lb/lb/anything", "x=1"],
  ["POST", "/anything", "x=1", `lb.localhost:0`],
];

/** What a page must not have changed. */
async function state() {
  const get = async (path: string) => (await (await fetch(`${emu.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as any;
  return {
    jobs: (await get("/_emulator/jobs")).count,
    status: (await get(`/v2/echo/status/${jobId}`)).status,
    batches: (await get("/v2/echo/batch")).batches.length,
    templates: (await get("/v1/templates")).length,
    endpoints: (await get("/v1/endpoints")).map((e: { id: string }) => e.id),
    registries: (await get("/v1/containerregistryauth")).length,
    clock: emu.clock.now(),
    lbCalls,
  };
}

const BROWSERS: Array<[string, Record<string, string>]> = [
  ["a page of another site", { origin: "http://attacker.test:8000", "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" }],
  ["a page on another port of 127.0.0.1", { origin: "http://127.0.0.1:5173", "sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors" }],
  ["an older browser (Origin alone)", { origin: "http://attacker.test:8000" }],
  ["a sandboxed frame (Origin: null)", { origin: "null" }],
];
// A CSP violation report (`report-uri`) is posted by the browser itself, with no preflight.
const SIMPLE_TYPES = [undefined, "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=----x", " Text/Plain ", "application/csp-report"];

describe("a write from a browser page of another origin", () => {
  it.each(BROWSERS)("from %s is refused with 403 on every route, and changes nothing", async (_who, from) => {
    const before = await state();
    for (const [method, path, body, host] of WRITES()) {
      for (const type of SIMPLE_TYPES) {
        const headers = { ...from, ...(type ? { "content-type": type } : {}) };
        const res = await send(method, path, headers, body, host?.replace(":0", `:${emu.port}`));
        expect(res.status, `${method} ${host ?? ""}${path} ${type}`).toBe(403);
        expect(res.headers["content-type"]).toBe("application/problem+json");
        const detail = JSON.parse(res.body).detail as string;
        expect(detail).toContain("cross-origin write refused");
        expect(detail).toContain(from.origin);
      }
    }
    expect(await state()).toEqual(before);
  });

  it("is refused even with a Basic Authorization a browser may add by itself", async () => {
    const before = await state();
    const res = await send("POST", "/graphql?api_key=x", { ...BROWSERS[0]![1], authorization: "Basic dTpw", "content-type": "text/plain" }, mutation('mutation { deleteEndpoint(id: "echo") }'));
    expect(res.status).toBe(403);
    expect(await state()).toEqual(before);
  });

  it("passes with what only a preflight lets a page send (a key in Authorization, a JSON body), as from a dev server's proxy", async () => {
    const cross = BROWSERS[0]![1];
    const withKey = await send(
      "POST",
      "/graphql",
      { ...cross, authorization: `Bearer ${KEY}`, "content-type": "text/plain" },
      mutation('mutation { saveTemplate(input: { name: "proxied", imageName: "a/b:1" }) { id } }'),
    );
    expect(withKey.status).toBe(200);
    expect(JSON.parse(withKey.body).data.saveTemplate.id).toBeTruthy();
    const asJson = await send("POST", "/graphql?api_key=x", { ...cross, "content-type": "application/json; charset=utf-8" }, mutation("{ myself { id } }"));
    expect(asJson.status).toBe(200);
    const run = await send("POST", "/v2/echo/run", { ...cross, authorization: KEY }, '{"input":{}}');
    expect(run.status).toBe(200);
    const lb = await send("POST", "/lb/lb/x", { ...BROWSERS[1]![1], authorization: KEY, "content-type": "text/plain" }, "x");
    expect(lb.status).toBe(200);
    expect(lb.body).toBe("worker");
  });

  it("passes from the page's own origin and from the user's own navigation", async () => {
    const own = `http://127.0.0.1:${emu.port}`;
    const q = mutation("{ myself { id } }");
    expect((await send("POST", "/graphql?api_key=x", { origin: own, "sec-fetch-site": "same-origin", "content-type": "text/plain" }, q)).status).toBe(200);
    expect((await send("POST", "/graphql?api_key=x", { origin: own, "content-type": "text/plain" }, q)).status).toBe(200);
    expect((await send("POST", "/graphql?api_key=x", { "sec-fetch-site": "none", "content-type": "text/plain" }, q)).status).toBe(200);
  });

  it("passes from clients outside a browser, which send neither Origin nor Sec-Fetch-Site (curl -d sends a form type)", async () => {
    const res = await send(
      "POST",
      "/graphql?api_key=x",
      { "content-type": "application/x-www-form-urlencoded" },
      mutation('mutation { saveTemplate(input: { name: "curl", imageName: "a/b:1" }) { id } }'),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).data.saveTemplate.id).toBeTruthy();
  });

  it("leaves reads alone: GET, HEAD and OPTIONS are not writes (a mutation over GET is refused by /graphql itself)", async () => {
    const cross = BROWSERS[0]![1];
    expect((await send("GET", `/v2/echo/status/${jobId}`, { ...cross, authorization: KEY })).status).toBe(200);
    const before = await state();
    const get = await send("GET", `/graphql?api_key=x&query=${encodeURIComponent('mutation { deleteEndpoint(id: "echo") }')}`, cross);
    expect(get.status).toBe(405);
    expect(await state()).toEqual(before);
    // A preflight to a load-balancing endpoint needs a key as any of its requests: a worker's own
    // CORS answer is never reached by a page's preflight, which carries none.
    const preflight = await send("OPTIONS", "/lb/lb/x", { ...cross, "access-control-request-method": "POST", "access-control-request-headers": "authorization" });
    expect(preflight.status).toBe(401);
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    expect(await state()).toEqual(before);
  });
});
