import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { routeHead, bodyRequest } from "../shared/rest.js";
import { SSH_KEY, SSH_KEY_EXPECTED } from "./model.js";
import { ERROR_RESPONSES, json } from "../../http/schemas.js";

const TAG = "Account";
const route = routeHead(TAG);
const { 404: _notFound, ...errors } = ERROR_RESPONSES;

const SshKeysV2Schema = z.object({ keys: z.array(z.string()) }).openapi("SshKeys");
const UpdateSshKeysV2Schema = z
  .strictObject({ keys: z.array(z.string().regex(SSH_KEY, SSH_KEY_EXPECTED)) })
  .openapi("UpdateSshKeysRequest");

const getKeys = createRoute({
  ...route("get", "/v2/account/ssh-keys", "getSshKeys", "The account's SSH public keys"),
  responses: { 200: json(SshKeysV2Schema, "The keys"), ...errors },
});

const putKeys = createRoute({
  ...route("put", "/v2/account/ssh-keys", "updateSshKeys", "Replace the account's SSH public keys"),
  description: "The whole set: keys not sent are removed, `[]` removes all. Pods created afterwards with startSsh get them as their PUBLIC_KEY env; existing pods keep theirs.",
  ...bodyRequest(UpdateSshKeysV2Schema),
  responses: { 200: json(SshKeysV2Schema, "The keys now"), ...errors },
});

/** `/v2/account/ssh-keys`: the account's SSH public keys. */
export function accountRoutes(core: Pick<ViewContext, "sshKeys">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(getKeys, (c) => c.json({ keys: core.sshKeys.list() }, 200));
  router.openapi(putKeys, (c) => c.json({ keys: core.sshKeys.replace(c.req.valid("json").keys) }, 200));
}
