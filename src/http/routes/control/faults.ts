import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { FaultRuleSchema } from "../../../config/faults-schema.js";
import { FAULT_RULES_LIVE_MAX } from "../../../domain/bounds.js";
import { EmulatorError } from "../../../domain/errors.js";
import { jsonBody } from "../../body.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, json, problem } from "../../schemas.js";

const TAG = "Emulator control";
const Id = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, example: "fault-1" }) });
const Removed = z.object({ removed: z.int() });

const clear = createRoute({
  method: "delete",
  path: "/_emulator/faults",
  operationId: "clearFaults",
  tags: [TAG],
  summary: "Remove every fault rule",
  responses: { 200: json(Removed, "How many were removed") },
});
const remove = createRoute({
  method: "delete",
  path: "/_emulator/faults/{id}",
  operationId: "removeFault",
  tags: [TAG],
  summary: "Remove one fault rule",
  request: { params: Id },
  responses: { 200: json(Removed, "Removed"), 404: ERROR_RESPONSES[404] },
});

/** The routes that show and take fault rules, whose operations are those of the services built. */
function ruleRoutes(RuleIn: FaultRuleSchema) {
  const Rule = RuleIn.extend({ operation: z.string().optional(), id: z.string(), matched: z.int(), fired: z.int(), spent: z.boolean() });
  const list = createRoute({
    method: "get",
    path: "/_emulator/faults",
    operationId: "listFaults",
    tags: [TAG],
    summary: "Fault rules",
    responses: { 200: json(z.object({ faults: z.array(Rule) }), "Every rule, with how often it matched and fired") },
  });
  const add = createRoute({
    method: "post",
    path: "/_emulator/faults",
    operationId: "addFault",
    tags: [TAG],
    summary: "Add a fault rule",
    description:
      "Request faults (`http`, `latency`, `reset`) match service requests by endpoint and operation; job faults (`worker-crash`, `timeout`) match jobs as they start; `no-workers` holds while the rule lives.",
    middleware: [jsonBody(64 * 1024)] as const,
    request: { body: { required: true, content: { "application/json": { schema: RuleIn } } } },
    responses: {
      200: json(Rule, "The rule, with its id"),
      400: ERROR_RESPONSES[400],
      409: problem(`${FAULT_RULES_LIVE_MAX} rules that may still fire are held already, the most minipod holds; remove some first`),
    },
  });
  return { list, add };
}

/** `/_emulator/faults`: add, list and remove fault rules. */
export function faultRoutes(core: Pick<Core, "faultRuleSchema" | "faults" | "log">, router: OpenAPIHono<AppEnv>): void {
  const { list, add } = ruleRoutes(core.faultRuleSchema);
  router.openapi(list, (c) => c.json({ faults: core.faults.list() }, 200));
  router.openapi(add, (c) => {
    const rule = core.faults.add(c.req.valid("json"));
    core.log.info(`fault rule ${rule.id} added: ${JSON.stringify(rule.fault)}${rule.endpoint ? ` on ${rule.endpoint}` : ""}${rule.operation ? ` /${rule.operation}` : ""}`);
    return c.json(rule, 200);
  });
  router.openapi(clear, (c) => c.json({ removed: core.faults.clear() }, 200));
  router.openapi(remove, (c) => {
    const { id } = c.req.valid("param");
    if (!core.faults.remove(id)) throw new EmulatorError("NOT_FOUND", `no fault rule "${id}"`);
    return c.json({ removed: 1 }, 200);
  });
}
