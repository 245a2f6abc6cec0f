import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { jsonBody } from "../../body.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { EmulatorError } from "../../../domain/errors.js";
import { ERROR_RESPONSES, json, NO_PARAMETERS_BODY, NO_PARAMETERS_LIMIT, problem } from "../../schemas.js";

const TAG = "Emulator control";
const Info = z.object({ name: z.string(), at: z.int().openapi({ description: "Virtual time it was taken" }), bytes: z.int() }).openapi("Snapshot");
const Name = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, "expected 1 to 100 letters, digits, '.', '_' or '-'")
    .openapi({ param: { name: "name", in: "path" }, example: "before-test" }),
});

const List = z.object({
  snapshots: z.array(Info),
  totalBytes: z.int().openapi({ description: "Bytes held by every snapshot" }),
  maxCount: z.int().openapi({ description: "Most snapshots held at once (snapshots.maxCount)" }),
  maxBytes: z.int().openapi({ description: "Most bytes held at once (snapshots.maxBytes)" }),
});
const list = createRoute({
  method: "get",
  path: "/_emulator/snapshots",
  operationId: "listSnapshots",
  tags: [TAG],
  summary: "Saved snapshots",
  responses: { 200: json(List, "Snapshots held in memory, and their bounds") },
});
const save = createRoute({
  method: "post",
  path: "/_emulator/snapshots/{name}",
  operationId: "saveSnapshot",
  tags: [TAG],
  summary: "Save the whole state under a name",
  description:
    "A SQLite image of the whole database (jobs, endpoints, resources, timelines), kept in memory, copied by turns of about 10 ms; requests made meanwhile wait for it, and it replaces a snapshot of the same name only once whole. Fault rules are not part of it. Refused with 409 when it would pass `snapshots.maxCount` or `snapshots.maxBytes`: delete a snapshot first.",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: { params: Name, body: NO_PARAMETERS_BODY },
  responses: {
    200: json(Info, "Saved (an existing snapshot of that name is replaced)"),
    400: ERROR_RESPONSES[400],
    409: problem("Over snapshots.maxCount or snapshots.maxBytes; delete a snapshot first"),
  },
});
const remove = createRoute({
  method: "delete",
  path: "/_emulator/snapshots/{name}",
  operationId: "deleteSnapshot",
  tags: [TAG],
  summary: "Delete a snapshot and free its memory",
  request: { params: Name },
  responses: { 200: json(z.object({ removed: z.int() }), "Deleted"), 404: ERROR_RESPONSES[404], 409: problem("It is being restored") },
});
const restore = createRoute({
  method: "post",
  path: "/_emulator/snapshots/{name}/restore",
  operationId: "restoreSnapshot",
  tags: [TAG],
  summary: "Put a snapshot back in place",
  description: "Replaces the state and sets the virtual clock back to the snapshot's time. Jobs that were running are re-queued (their handlers are not running any more).",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: { params: Name, body: NO_PARAMETERS_BODY },
  responses: { 200: json(Info, "Restored"), 404: ERROR_RESPONSES[404] },
});
const exportDb = createRoute({
  method: "get",
  path: "/_emulator/export",
  operationId: "exportState",
  tags: [TAG],
  summary: "The whole state as a SQLite file, secrets redacted",
  description: "What `minipod export FILE` saves; start another emulator on it with `minipod --import FILE`.",
  responses: { 200: { description: "A SQLite database file", content: { "application/vnd.sqlite3": { schema: z.string().openapi({ format: "binary" }) } } } },
});

/** Named snapshots and the export of the state. */
export function snapshotRoutes(core: Pick<Core, "log" | "snapshots">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(list, (c) => c.json({ snapshots: core.snapshots.list(), totalBytes: core.snapshots.totalBytes(), ...core.snapshots.bounds }, 200));
  router.openapi(save, async (c) => {
    const info = await core.snapshots.saveInSteps(c.req.valid("param").name);
    core.log.info(`snapshot "${info.name}" saved (${info.bytes} bytes)`);
    return c.json(info, 200);
  });
  router.openapi(remove, (c) => {
    const { name } = c.req.valid("param");
    if (!core.snapshots.delete(name)) throw new EmulatorError("NOT_FOUND", `no snapshot named "${name}"; held: ${core.snapshots.list().map((s) => s.name).join(", ") || "none"}`);
    core.log.info(`snapshot "${name}" deleted`);
    return c.json({ removed: 1 }, 200);
  });
  router.openapi(restore, async (c) => {
    const info = await core.snapshots.restore(c.req.valid("param").name);
    core.log.info(`snapshot "${info.name}" restored; clock at ${new Date(info.at).toISOString()}`);
    return c.json(info, 200);
  });
  router.openapi(exportDb, async (c) => {
    const { bytes, body } = await core.snapshots.exportState();
    return c.body(body, 200, { "content-type": "application/vnd.sqlite3", "content-length": String(bytes), "content-disposition": 'attachment; filename="minipod-state.db"' });
  });
}
