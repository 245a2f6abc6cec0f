import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { EcrDelegation } from "./delegations.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { idParams, routeHead, bodyRequest } from "../shared/rest.js";
import { ERROR_RESPONSES, json, problem } from "../../http/schemas.js";
import { iso } from "../shared/container-v2.js";

const TAG = "Registries";
const route = routeHead(TAG);

const DelegationSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    delegatorUserId: z.string(),
    awsUser: z.string(),
    repository: z.string(),
    tag: z.string(),
    awsRegion: z.string(),
    dockerRegistryUri: z.string(),
    createdAt: z.string(),
  })
  .openapi("EcrDelegation");
const CreateDelegationSchema = z
  .strictObject({ resource: z.string().min(1).openapi({ example: "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment" }), name: z.string().nullable().optional() })
  .openapi("CreateDelegationRequest");

const show = (d: EcrDelegation) => ({ ...d, createdAt: iso(d.createdAt) });

const list = createRoute({
  ...route("get", "/v2/registries/delegations", "listDelegations", "List ECR delegations"),
  responses: { 200: json(z.object({ delegations: z.array(DelegationSchema) }), "Every delegation"), ...ERROR_RESPONSES },
});
const create = createRoute({
  ...route("post", "/v2/registries/delegations", "createDelegation", "Register an ECR delegation"),
  description: "Read from the repository's ARN (a `:tag` after its name, else latest). minipod pulls nothing: the delegation is kept as registered.",
  ...bodyRequest(CreateDelegationSchema),
  responses: { 201: json(DelegationSchema, "Registered"), ...ERROR_RESPONSES },
});
const revoke = createRoute({
  ...route("delete", "/v2/registries/delegations/{id}", "revokeDelegation", "Revoke an ECR delegation"),
  request: { params: idParams("id") },
  responses: { 204: { description: "Revoked; no body" }, ...ERROR_RESPONSES, 404: problem("No delegation with this id") },
});

/** `/v2/registries/delegations`: registered before `/v2/registries/{id}`, which would take the name for an id. */
export function delegationRoutes(core: Pick<ViewContext, "delegations">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(list, (c) => c.json({ delegations: core.delegations.list().map(show) }, 200));
  router.openapi(create, (c) => {
    const { resource, name } = c.req.valid("json");
    return c.json(show(core.delegations.create(resource, name)), 201);
  });
  router.openapi(revoke, (c) => {
    core.delegations.revoke(c.req.valid("param").id);
    return c.body(null, 204);
  });
}
