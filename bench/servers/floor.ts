/**
 * The floor of any server that keeps its jobs, on minipod's stack: Hono on @hono/node-server with
 * better-sqlite3 (the same versions minipod uses). POST /run reads the body, checks that `input`
 * is an object, gives the job an id and writes one row with one INSERT (autocommit, an in-memory
 * database, a primary key and no other index); GET /status reads that row back. No validation
 * schema, queue, worker, deadline, timeline or journal: less than the specification asks of every
 * job, so no faithful emulator on this stack and machine can be faster. Rows are kept for the
 * whole run, as minipod keeps its jobs for their 30-minute result retention.
 * Usage: node --import tsx bench/servers/floor.ts PORT
 */
import { randomUUID } from "node:crypto";
import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import { Hono } from "hono";

const db = new Database(":memory:");
db.exec("CREATE TABLE jobs (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL, created_at INTEGER NOT NULL)");
const insert = db.prepare<[string, string, string, string, number]>("INSERT INTO jobs VALUES (?, ?, ?, ?, ?)");
const select = db.prepare<[string], { id: string; status: string; input: string }>("SELECT id, status, input FROM jobs WHERE id = ?");
let inserted = 0;

const app = new Hono();
app.post("/v2/:endpoint/run", async (c) => {
  const body = (await c.req.json()) as { input?: unknown };
  if (typeof body?.input !== "object" || body.input === null) return c.json({ error: "input must be an object" }, 400);
  const id = `${randomUUID()}-u1`;
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
