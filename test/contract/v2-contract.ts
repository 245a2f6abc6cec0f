import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { readFileSync } from "node:fs";
import { specFile, specMissing } from "../support/shared.js";

/**
 * Checks minipod's answers on the REST v2 surface against the service's published description
 * (`rest-v2.openapi.json`, read where it is kept: `../shared/spec/`), with Ajv's JSON Schema 2020-12 validator
 * (OpenAPI 3.1's dialect): the status must be one the operation declares (a success one
 * explicitly; an error one explicitly or through `default`), the media type one it declares for
 * that status, the body valid against its schema, and the declared headers that are sent valid.
 */

type Json = Record<string, any>;
/** The published description, where the shared folder is beside the repository; undefined elsewhere. */
export const DESCRIPTION_FILE = specFile("rest-v2");
/** The line a test skipped for want of it prints. */
export const DESCRIPTION_MISSING = specMissing("rest-v2");

/**
 * Where the description contradicts itself, and only there, the check is loosened: each entry
 * names the place, the contradiction, and what the check does instead. Nothing else is skipped.
 */
export const EXCEPTIONS: ReadonlyArray<{ schema: string; property: string; change: string; reason: string }> = [
  ...["status", "stream", "cancel", "retry"].map((property) => ({
    schema: "QueueBasedRequestUrls",
    property,
    change: "`format: uri` is not checked",
    reason:
      "the description gives these URLs with a literal `{job_id}` (its example: `https://api.runpod.ai/v2/4m7x2k9q/status/{job_id}`), which RFC 3986 (and so `format: uri`) forbids; minipod sends them as the description's examples do",
  })),
];

/**
 * Routes minipod serves under the v2 REST resources that the description does not have: the
 * service's MCP server calls them (GitHub builds of an endpoint), so minipod answers them; there is
 * nothing to check them against.
 */
export const BEYOND_DESCRIPTION: ReadonlyArray<{ method: string; pattern: RegExp; path: string }> = [
  { method: "GET", path: "/v2/serverless/{id}/builds", pattern: /^\/v2\/serverless\/[^/]+\/builds$/ },
  { method: "GET", path: "/v2/serverless/{id}/builds/{buildId}", pattern: /^\/v2\/serverless\/[^/]+\/builds\/[^/]+$/ },
];

export function loadDescription(): Json {
  if (!DESCRIPTION_FILE) throw new Error(DESCRIPTION_MISSING);
  const d = JSON.parse(readFileSync(DESCRIPTION_FILE, "utf8")) as Json;
  for (const e of EXCEPTIONS) delete d.components.schemas[e.schema].properties[e.property].format;
  return d;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  pattern: RegExp;
  op: Json;
}

/** Every operation of the description, matched by method and path. */
export function operations(d: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(d.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!op?.operationId) continue;
      const source = path.split("/").map((s) => (s.startsWith("{") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/");
      out.push({ method: method.toUpperCase(), path, operationId: op.operationId, pattern: new RegExp(`^${source}$`), op });
    }
  }
  // Static segments win over parameters (`/v2/registries/delegations` over `/v2/registries/{id}`).
  const params = (o: Operation) => o.path.split("{").length;
  return out.sort((a, b) => params(a) - params(b));
}

export interface Answer {
  method: string;
  /** The request path, without the query. */
  path: string;
  status: number;
  headers: Headers;
  body: string;
}

export interface Verdict {
  operation: Operation | undefined;
  problems: string[];
}

const STRUCTURED_LIST = /^"(minute|hour|day)";[a-z]=\d+;[a-z]=\d+(, "(minute|hour|day)";[a-z]=\d+;[a-z]=\d+)*$/;

/** A checker of answers against the description. */
export function contract(d: Json = loadDescription()) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  // ajv-formats is CommonJS: its plugin is the module itself, or its default under some loaders.
  const addFormats = ((formats as unknown as { default?: typeof formats }).default ?? formats) as unknown as (a: Ajv2020) => void;
  addFormats(ajv);
  for (const f of ["float", "double", "int32", "int64"]) ajv.addFormat(f, true);
  ajv.addSchema(d, "rest-v2");
  const ops = operations(d);
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string) => {
    let v = validators.get(pointer);
    if (!v) {
      v = ajv.compile({ $ref: `rest-v2#${pointer}` });
      validators.set(pointer, v);
    }
    return v;
  };
  const deref = (x: Json): Json => (x?.$ref ? deref(x.$ref.split("/").slice(1).reduce((o: Json, k: string) => o[k], d)) : x);
  const esc = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

  /** The description's operation for a method and path, if it has one. */
  const find = (method: string, path: string) => ops.find((o) => o.method === method && o.pattern.test(path));

  const errorResponse = validatorAt("/components/schemas/ErrorResponse");

  function check(given: Answer): Verdict {
    // HEAD is GET without the body (RFC 9110): the same status and headers.
    const head = given.method === "HEAD";
    const a = head ? { ...given, method: "GET" } : given;
    const operation = find(a.method, a.path);
    if (!operation) {
      if (BEYOND_DESCRIPTION.some((r) => r.method === a.method && r.pattern.test(a.path))) return { operation, problems: [] };
      // Not an operation (a method a path does not take, a path that is none): an error, in the description's error form.
      const where = `${a.method} ${a.path} (no operation of the description) answered ${a.status}`;
      const problems: string[] = [];
      if (a.status < 400) problems.push(`${where}: expected an error status`);
      if (!(a.headers.get("content-type") ?? "").startsWith("application/problem+json")) problems.push(`${where}: expected application/problem+json`);
      else if (!head && !errorResponse(JSON.parse(a.body))) problems.push(`${where}: the body is no ErrorResponse`);
      return { operation, problems };
    }
    const problems: string[] = [];
    const where = `${operation.operationId} (${a.method} ${a.path}) answered ${a.status}`;
    const declared = operation.op.responses as Json;
    const key = String(a.status) in declared ? String(a.status) : a.status >= 400 && "default" in declared ? "default" : undefined;
    if (!key) return { operation, problems: [`${where}: the description declares ${Object.keys(declared).join(", ")}`] };
    const response = deref(declared[key]);
    const type = (a.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (a.body !== "") problems.push(`${where}: a body where the description declares none`);
    } else if (head) {
      if (!(type in content)) problems.push(`${where}: content type "${type}", the description declares ${Object.keys(content).join(", ")}`);
    } else if (!(type in content)) {
      problems.push(`${where}: content type "${type}", the description declares ${Object.keys(content).join(", ")}`);
    } else if (type.endsWith("json") && !head) {
      let body: unknown;
      try {
        body = JSON.parse(a.body);
      } catch {
        problems.push(`${where}: the body is not JSON`);
      }
      const base = declared[key].$ref ? `/components/responses/${declared[key].$ref.split("/").pop()}` : `/paths/${esc(operation.path)}/${a.method.toLowerCase()}/responses/${key}`;
      const validate = validatorAt(`${base}/content/${esc(type)}/schema`);
      if (body !== undefined && !validate(body)) {
        for (const e of validate.errors ?? [])
          problems.push(`${where}: body${e.instancePath} ${e.message}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`);
      }
    }
    for (const [name, h] of Object.entries<Json>(response.headers ?? {})) {
      const value = a.headers.get(name);
      if (value === null) continue;
      const header = deref(h);
      if ((name === "RateLimit" || name === "RateLimit-Policy") && !STRUCTURED_LIST.test(value)) problems.push(`${where}: header ${name} "${value}" is not the structured list the description shows`);
      if (/Always `([^`]+)`/.test(header.description ?? "")) {
        const always = /Always `([^`]+)`/.exec(header.description)![1];
        if (value !== always) problems.push(`${where}: header ${name} "${value}", the description says always "${always}"`);
      }
    }
    return { operation, problems };
  }

  /** Problems of a success body of an operation (its first 2xx response with a JSON body), as a client received it. */
  function checkSuccessBody(operationId: string, body: unknown): string[] {
    const operation = ops.find((o) => o.operationId === operationId);
    if (!operation) return [`${operationId} is no operation of the description`];
    const key = Object.keys(operation.op.responses).find((k) => k.startsWith("2") && deref(operation.op.responses[k]).content?.["application/json"]);
    if (!key) return [`${operationId} declares no JSON success body`];
    const validate = validatorAt(`/paths/${esc(operation.path)}/${operation.method.toLowerCase()}/responses/${key}/content/application~1json/schema`);
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${operationId}: body${e.instancePath} ${e.message}`);
  }

  return { check, checkSuccessBody, operations: ops, find };
}

/** Whether a path is on the REST v2 surface the description covers (not a queue or worker route). */
export function isRestV2(path: string, resources: ReadonlySet<string>): boolean {
  if (!path.startsWith("/v2/")) return false;
  const first = path.slice(4).split("/")[0]!;
  return resources.has(first);
}
