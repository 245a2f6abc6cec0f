import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

/**
 * A webhook URL that authenticates its receiver in the query (as the docs suggest) is called with
 * its real query, and shown with the values of its secret-named parameters redacted wherever
 * minipod shows it: the journal, the webhook attempts, a job's detail, the dashboard, the export.
 */
const SECRETS = { token: "tok-3f9a", secret: "sec-77b1", sig: "sig-0c2e", "X-Amz-Signature": "amzsig-5d4", auth: "auth-91aa", access_token: "acc-4e02", api_key: "apk-6c13" };
const query = `${Object.entries(SECRETS)
  .map(([k, v]) => `${k}=${v}`)
  .join("&")}&keep=visible`;

let receiver: Server;
let received: Array<{ url: string; body: { webhook?: string } }>;
const waiting: Array<() => void> = [];
const arrived = () => waiting.forEach((check) => check());
/** Resolves once the receiver has had `n` calls. */
function whenReceived(n: number): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(() => received.length >= n && resolve());
    arrived();
  });
}
let hook = "";
let e: InProcess;

beforeEach(async () => {
  received = [];
  receiver = createServer((req, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      received.push({ url: req.url!, body: JSON.parse(text) });
      res.writeHead(200).end();
      arrived();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?${query}`;
  e = await inProcess({ config: { endpoints: [{ id: "q", handler: "echo", workersMin: 1, coldStartMs: 0 }, { id: "later", handler: "echo", workersMin: 0, coldStartMs: 10_000 }] } });
});
afterEach(async () => {
  e.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});

const expectRedacted = (text: string, where: string) => {
  for (const value of Object.values(SECRETS)) expect(text, `${where} shows ${value}`).not.toContain(value);
  expect(text, where).toContain("keep=visible");
};

/** Runs a job with the webhook until its call is received. */
async function delivered(): Promise<string> {
  // Counted before the job is sent: its call may arrive while the submission is answered.
  const called = whenReceived(received.length + 1);
  const id = (await e.post("/v2/q/run", { input: { n: 1 }, webhook: hook })).body.id as string;
  await e.core.runUntilIdle();
  await called;
  return id;
}

describe("a webhook URL with a token in its query", () => {
  it("is called with its real query, and the receiver gets the real URL in the body", async () => {
    await delivered();
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe(`/hook?${query}`);
    expect(received[0]!.body.webhook).toBe(hook);
  });

  it("is shown redacted in the journal, the webhook attempts, the job's detail and the dashboard", async () => {
    const id = await delivered();
    const journal = (await e.get("/_emulator/requests?endpoint=q")).text;
    expectRedacted(journal, "the journal");
    expect(journal).toContain("token=[redacted]");
    const attempts = (await e.get("/_emulator/webhooks")).body.deliveries as Array<{ url: string; status: number }>;
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.status).toBe(200);
    expect(attempts[0]!.url).toBe(hook.replace(/=[^&]+/g, "=[redacted]").replace("keep=[redacted]", "keep=visible"));
    const detail = (await e.get(`/_emulator/jobs/${id}`)).text;
    expectRedacted(detail, "the job's detail");
    expect(detail).toContain("sig=[redacted]");
    for (const panel of ["webhooks", `job?id=${id}`]) expectRedacted((await e.get(`/_dashboard/panels/${panel}`)).text, `the dashboard's ${panel}`);
  });

  it("is redacted in the export, and kept whole in a snapshot, whose restored job still calls the real URL", async () => {
    // Still queued when the state is saved: its worker takes 10 s to start.
    expect((await e.post("/v2/later/run", { input: {}, webhook: hook })).status).toBe(200);
    await e.post("/v2/q/batch", { name: "b", webhook: hook, requests: [] });
    const image = await e.app.request("http://minipod.test/_emulator/export");
    // The job's webhook, and the batch's in its document.
    expectRedacted(Buffer.from(await image.arrayBuffer()).toString("latin1"), "the export");

    expect((await e.post("/_emulator/snapshots/s", {})).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/s/restore", {})).status).toBe(200);
    expect(received).toEqual([]);
    const called = whenReceived(1);
    await e.core.runUntilIdle();
    await called;
    expect(received.map((r) => r.url)).toEqual([`/hook?${query}`]);
  });
});
