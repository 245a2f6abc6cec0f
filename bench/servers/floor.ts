/**
 * The floor of any server that keeps its jobs, on minipod's stack: Hono on @hono/node-server with
 * better-sqlite3 (the same versions minipod uses). POST /run reads the body, checks that `input`
 * is an object, gives the job an id and writes one row with one INSERT (autocommit, an in-memory
 * database, a primary key and no other index); GET /status reads that row back. No validation
 * schema, queue, worker, deadline, timeline or journal: less than the specification asks of every
 * job. What it does, it does the cheapest way minipod found: the body read straight from node's
 * request (not through a web Request), ids that sort by creation (a random id lands anywhere in
 * the key's index). Rows are kept for the whole run, as minipod keeps its jobs for their 30-minute
 * result retention.
 * Usage: node --import tsx bench/servers/floor.ts PORT
 */
import type { IncomingMessage } from "node:http";
import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import { Hono } from "hono";

const db = new Database(":memory:");
db.exec("CREATE TABLE jobs (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL, created_at INTEGER NOT NULL)");
const insert = db.prepare<[string, string, string, string, number]>("INSERT INTO jobs VALUES (?, ?, ?, ?, ?)");
const select = db.prepare<[string], { id: string; status: string; input: string }>("SELECT id, status, input FROM jobs WHERE id = ?");
let inserted = 0;

const readBody = (incoming: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming
      .on("data", (chunk: Buffer) => chunks.push(chunk))
      .on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      .on("error", reject);
  });

const app = new Hono<{ Bindings: { incoming: IncomingMessage } }>();
app.post("/v2/:endpoint/run", async (c) => {
  let body: { input?: unknown };
  try {
    body = JSON.parse(await readBody(c.env.incoming)) as { input?: unknown };
  } catch {
    return c.json({ error: "the body is not JSON" }, 400);
  }
  if (typeof body?.input !== "object" || body.input === null) return c.json({ error: "input must be an object" }, 400);
  const id = `${Date.now().toString(16)}-${inserted.toString(16).padStart(8, "0")}-u1`;
  insert.run(id, c.req.param("endpoint"), "IN_QUEUE", JSON.stringify(body.input), Date.now());
  inserted++;
  return c.json({ id, status: "IN_QUEUE" }, 200);
});
app.get("/v2/:endpoint/status/:id", (c) => {
  const row = select.get(c.req.param("id"));
  if (!row) return c.json({ error: "job not found" }, 404);
  return c.json({ id: row.id, status: row.status, input: JSON.parse(row.input) as unknown }, 200);
});
app.get("/v2/:endpoint/health", (c) => c.json({ jobs: { inQueue: inserted } }, 200));

serve({ fetch: app.fetch, port: Number(process.argv[2]), hostname: "127.0.0.1" });
process.on("SIGTERM", () => process.exit(0));
