import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator } from "../../src/compose/emulator.js";
import { browserAvailable, launchChromium, type RunningBrowser } from "./chromium.js";

const available = browserAvailable();
/** A site of the attacker's, which Chromium resolves to 127.0.0.1 (where its server listens). */
const ATTACKER = "attacker.test";

/**
 * Every way a page may send a write to another origin without asking (forms of each encoding,
 * a no-cors fetch, a beacon), against each write surface, one after the other. A field name
 * carrying the JSON is the classic trick that makes a text/plain form post a JSON body:
 * `{"query":"...","pad":"` + `=` + `"}`. Each form posts into a frame of its own and is done
 * when the frame loads (a refusal is a page too); `window.done` when all have run.
 */
const ATTACKS = (targets: Array<{ url: string; body: string }>) => `
const targets = ${JSON.stringify(targets)};
const form = (url, enctype, fields) =>
  new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = "f" + Math.random().toString(36).slice(2);
    document.body.appendChild(frame);
    const f = document.createElement("form");
    f.method = "POST";
    f.action = url;
    f.enctype = enctype;
    f.target = frame.name;
    for (const [k, v] of fields) {
      const input = document.createElement("input");
      input.name = k;
      input.value = v;
      f.appendChild(input);
    }
    document.body.appendChild(f);
    frame.addEventListener("load", resolve, { once: true });
    f.submit();
  });
const smuggled = (body) => (body.endsWith("}") ? [[body.slice(0, -1) + ',"pad":"', '"}']] : [[body, ""]]);
(async () => {
  window.sent = 0;
  for (const { url, body } of targets) {
    await form(url, "text/plain", smuggled(body));
    await form(url, "application/x-www-form-urlencoded", smuggled(body));
    await form(url, "multipart/form-data", smuggled(body));
    await fetch(url, { method: "POST", mode: "no-cors", body }).catch(() => {});
    await fetch(url, { method: "POST", mode: "no-cors", body: new Blob([body]) }).catch(() => {});
    await fetch(url, { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "application/x-www-form-urlencoded" }, body }).catch(() => {});
    navigator.sendBeacon(url, body);
    window.sent += 7;
  }
  window.done = true;
})();
`;

const gql = (q: string) => JSON.stringify({ query: q });

describe.skipIf(!available)("writes from a page of another origin, in Chromium", { timeout: 180_000 }, () => {
  let chrome: RunningBrowser;
  let attacker: Server;
  let attackerPort = 0;
  let page = "";
  /** The attack page's Content-Security-Policy, when it has one. */
  let csp = "";
  beforeAll(async () => {
    // Chromium's Local Network Access checks off: minipod must hold without them (as in cross-site.test.ts).
    chrome = await launchChromium([
      `--host-resolver-rules=MAP ${ATTACKER} 127.0.0.1`,
      "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights",
    ]);
    attacker = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html", ...(csp ? { "content-security-policy": csp } : {}) }).end(page));
    await new Promise<void>((r) => attacker.listen(0, "127.0.0.1", r));
    attackerPort = (attacker.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await chrome?.close();
    await new Promise<void>((r) => attacker?.close(() => r()));
  });

  /** minipod in an auth setup, with a job, a queue, an OpenAI endpoint and a load-balancing one. */
  async function boot(auth: Record<string, unknown>) {
    const lines: string[] = [];
    let lbCalls = 0;
    const emu = await createEmulator({
      clock: "manual",
      logLevel: "info",
      log: (l) => lines.push(l),
      config: {
        ...auth,
        endpoints: [
          { id: "echo", handler: "echo", workersMin: 0, workersMax: 0 },
          { id: "llm", handler: "openai", workersMin: 0, workersMax: 0 },
          { id: "lb", type: "LOAD_BALANCER", workersMin: 1, coldStartMs: 0, handler: () => ((lbCalls += 1), new Response("worker")) },
        ],
      } as never,
    });
    await emu.clock.advance(0);
    const key = "k";
    const run = await fetch(`${emu.url}/v2/echo/run`, { method: "POST", headers: { authorization: key }, body: '{"input":{}}' });
    const jobId = ((await run.json()) as { id: string }).id;
    const get = async (path: string) => (await (await fetch(`${emu.url}${path}`, { headers: { authorization: `Bearer ${key}`, "x-minipod-control-key": "ck" } })).json()) as any;
    const state = async () => ({
      jobs: (await get("/_emulator/jobs")).count,
      status: (await get(`/v2/echo/status/${jobId}`)).status,
      batches: (await get("/v2/echo/batch")).batches?.length,
      templates: (await get("/v1/templates")).length,
      endpoints: (await get("/v1/endpoints")).map((e: { id: string; name: string }) => `${e.id}:${e.name}`).sort(),
      registries: (await get("/v1/containerregistryauth")).length,
      faults: (await get("/_emulator/faults")).faults.length,
      snapshots: (await get("/_emulator/snapshots")).snapshots.length,
      clock: emu.clock.now(),
      lbCalls,
    });
    const T = emu.url;
    const targets = [
      ...[
        'mutation { deleteEndpoint(id: "echo") }',
        'mutation { saveTemplate(input: { name: "miner", imageName: "evil/miner:latest" }) { id } }',
        'mutation { saveRegistryAuth(input: { name: "r", username: "u", password: "p" }) { id } }',
      ].map((q) => ({ url: `${T}/graphql?api_key=x`, body: gql(q) })),
      { url: `${T}/v2/echo/run`, body: '{"input":{"planted":1}}' },
      { url: `${T}/v2/echo/runsync`, body: '{"input":{"planted":1}}' },
      { url: `${T}/v2/echo/cancel/${jobId}`, body: "{}" },
      { url: `${T}/v2/echo/purge-queue`, body: "{}" },
      { url: `${T}/v2/echo/batch`, body: '{"requests":[]}' },
      { url: `${T}/v2/llm/openai/v1/chat/completions`, body: '{"model":"m","messages":[{"role":"user","content":"hi"}]}' },
      { url: `${T}/v1/templates`, body: '{"name":"miner1","imageName":"evil/miner:latest"}' },
      { url: `${T}/v1/endpoints/echo/update`, body: '{"name":"hacked"}' },
      { url: `${T}/v2/templates`, body: '{"name":"miner2","imageName":"evil/miner:latest"}' },
      { url: `${T}/v2/registries`, body: '{"name":"r2","username":"u","password":"p"}' },
      { url: `${T}/_emulator/reset`, body: "{}" },
      { url: `${T}/_emulator/clock/advance`, body: '{"ms":3600000}' },
      { url: `${T}/_emulator/snapshots/planted`, body: "{}" },
      { url: `${T}/lb/lb/anything`, body: "{}" },
      { url: `http://lb.localhost:${emu.port}/anything`, body: "{}" },
    ];
    return { emu, lines, state, targets };
  }

  /** Opens the attack page at `origin` in a fresh profile context (with `cookie`, an unlocked dashboard's); answers how many writes it sent. */
  async function attack(origin: string, targets: Array<{ url: string; body: string }>, cookie?: { name: string; value: string; url: string }) {
    page = `<!doctype html><html><body><h1>cat pictures</h1><script>${ATTACKS(targets)}</script></body></html>`;
    const context = await chrome.browser.newContext();
    if (cookie) await context.addCookies([cookie]);
    const p = await context.newPage();
    p.setDefaultTimeout(120_000);
    await p.goto(`${origin}/`);
    await p.waitForFunction(() => (globalThis as unknown as { done?: boolean }).done === true, undefined, { polling: 200 });
    const sent = (await p.evaluate(() => (globalThis as unknown as { sent: number }).sent)) as number;
    await context.close();
    return sent;
  }

  it("CSP violation reports a page's policy sends to minipod (report-uri, no preflight) are refused on every surface", async () => {
    const { emu, lines, state } = await boot({});
    try {
      const before = await state();
      const T = emu.url;
      const reportTo = [`${T}/graphql?api_key=x`, `${T}/v2/echo/run`, `${T}/lb/lb/x`];
      // Each image the policy forbids is a violation, reported to every address of report-uri.
      csp = `img-src 'none'; report-uri ${reportTo.join(" ")}`;
      page = `<!doctype html><html><body><img src="/a.png"><img src="/b.png"><script>window.done = true</script></body></html>`;
      const from = lines.length;
      const posts = () => lines.slice(from).filter((l) => / info {2}POST \S+ \d+ /.test(l));
      const context = await chrome.browser.newContext();
      const p = await context.newPage();
      await p.goto(`http://${ATTACKER}:${attackerPort}/`);
      const refused = () => ["/graphql", "/v2/echo/run", "/lb/lb/x"].every((path) => posts().some((l) => l.includes(` POST ${path} 403 `)));
      // Chromium sends the reports on its own schedule: up to 30 s of polling the log.
      for (let i = 0; i < 300 && !refused(); i++) await p.waitForTimeout(100);
      await context.close();
      expect(refused(), posts().join("\n")).toBe(true);
      expect(posts().filter((l) => !l.includes(" 403 "))).toEqual([]);
      expect(lines.some((l) => l.includes("cross-origin write refused: POST /graphql") || l.includes("cross-origin write refused: POST /v2/echo/run"))).toBe(true);
      expect(await state()).toEqual(before);
    } finally {
      csp = "";
      await emu.close();
    }
  });

  const SETUPS: Array<[string, Record<string, unknown>]> = [
    ["open auth (no auth.keys)", {}],
    ["API keys and a controlKey", { auth: { keys: [{ key: "k" }] }, controlKey: "ck" }],
  ];

  for (const [setup, auth] of SETUPS) {
    it(`with ${setup}: a page of another site, and one on another port of 127.0.0.1, change nothing on any surface`, async () => {
      const { emu, lines, state, targets } = await boot(auth);
      try {
        const before = await state();
        for (const origin of [`http://${ATTACKER}:${attackerPort}`, `http://127.0.0.1:${attackerPort}`]) {
          // The dashboard unlocked in this browser: its cookie (SameSite=Strict) goes with requests from another port, the same site.
          const cookie = auth.controlKey ? { name: `minipod_control_key_${emu.port}`, value: "ck", url: emu.url } : undefined;
          const sent = await attack(origin, targets, cookie);
          expect(sent).toBe(targets.length * 7);
          expect(await state(), origin).toEqual(before);
        }
        // The attempts reached minipod and were refused there, GraphQL's among them.
        expect(lines.filter((l) => / POST \/graphql 403 /.test(l)).length).toBeGreaterThanOrEqual(2 * 3 * 5);
        expect(lines.some((l) => / POST \/graphql 200 /.test(l))).toBe(false);
        // Why, once per origin.
        const why = lines.filter((l) => l.includes("cross-origin write refused"));
        expect(why).toHaveLength(2);
        expect(why[0]).toContain(`cross-origin write refused: POST /graphql came from a page of another origin, http://${ATTACKER}:${attackerPort} (Sec-Fetch-Site: cross-site)`);
        expect(why[1]).toContain(`http://127.0.0.1:${attackerPort} (Sec-Fetch-Site: same-site)`);
      } finally {
        await emu.close();
      }
    });
  }
});
