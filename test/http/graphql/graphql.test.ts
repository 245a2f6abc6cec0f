import { buildClientSchema, getIntrospectionQuery } from "graphql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GRAPHQL_MAX_COST } from "../../../src/http/routes/graphql/cost.js";
import { GRAPHQL_LIMITS } from "../../../src/http/routes/graphql/execute.js";
import { GPU_TYPES } from "../../../src/services/shared/catalog/gpu-catalog.js";
import { API_KEY, inProcess, type InProcess } from "../../support/in-process.js";

/**
 * `/graphql` through the app: the reference implementation's parsing, validation, variables,
 * fragments, aliases and introspection over minipod's schema; the service's error shapes (200 with
 * errors[], 400, 401); the bounds; and the same models as REST.
 */
const config = {
  templates: [{ id: "tpl", name: "worker", imageName: "me/worker:1", isServerless: true }],
  networkVolumes: [{ id: "vol", name: "data", size: 20, dataCenter: "US-KS-2" }],
  auth: { keys: [{ key: API_KEY }, { key: "reader", scopes: ["rest:read" as const] }] },
};

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config });
});
afterEach(() => e.close());

const gql = (query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) => e.request("POST", "/graphql", { query, ...(variables ? { variables } : {}) }, headers);
const anonymous = (query: string) => e.app.request("http://minipod.test/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });

describe("POST /graphql", () => {
  it("runs a query with variables, fragments and aliases", async () => {
    const created = await e.post("/v2/pods", { name: "p1", image: "me/x:1", gpu: { id: "NVIDIA A40", count: 1 } });
    const res = await gql(
      `query Pods($id: String!) {
        me: myself { ...Account }
        one: pod(input: { podId: $id }) { ...PodBits }
        again: pod(input: { podId: $id }) { name }
      }
      fragment Account on User { id pods { ...PodBits } networkVolumes { id dataCenterId } }
      fragment PodBits on Pod { id desiredStatus gpuCount machine { gpuDisplayName } }`,
      { id: created.body.id },
    );
    expect(res.status).toBe(200);
    const pod = { id: created.body.id, desiredStatus: "RUNNING", gpuCount: 1, machine: { gpuDisplayName: "A40" } };
    expect(res.body).toEqual({ data: { me: { id: "user_minipod", pods: [pod], networkVolumes: [{ id: "vol", dataCenterId: "US-KS-2" }] }, one: pod, again: { name: "p1" } } });
    // The same text again (its parsed document is kept), with other variables and an operation to pick.
    const second = await e.post("/v2/pods", { name: "p2", image: "me/x:1", gpu: { id: "NVIDIA L4", count: 2 } });
    const byName = (id: string) =>
      e.request("POST", "/graphql", { query: "query A($id: String!) { pod(input: { podId: $id }) { name } } query B { myself { id } }", operationName: "A", variables: { id } });
    expect((await byName(created.body.id)).body).toEqual({ data: { pod: { name: "p1" } } });
    expect((await byName(second.body.id)).body).toEqual({ data: { pod: { name: "p2" } } });
    const unnamed = await e.request("POST", "/graphql", { query: "query A($id: String!) { pod(input: { podId: $id }) { name } } query B { myself { id } }" });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.errors[0].message).toContain("operationName");
  });

  it("answers introspection", async () => {
    const res = await gql(`{ __schema { queryType { name } mutationType { name } } __type(name: "Pod") { fields { name } } }`);
    expect(res.status).toBe(200);
    expect(res.body.data.__schema).toEqual({ queryType: { name: "Query" }, mutationType: { name: "Mutation" } });
    expect(res.body.data.__type.fields.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(["id", "desiredStatus", "runtime", "machine", "env"]));
    // The full introspection query explorers send fits the bounds, and builds a client schema.
    const full = await gql(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }));
    expect(full.status).toBe(200);
    expect(buildClientSchema(full.body.data).getQueryType()?.getFields().gpuTypes).toBeDefined();
  });

  it("a resolver's refusal is 200 with errors[] (message, path, extensions) beside the data", async () => {
    const res = await gql(`{ gpuTypes(input: { id: "NVIDIA L4" }) { id } pod(input: { podId: "nope" }) { id } }`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: { gpuTypes: [{ id: "NVIDIA L4" }], pod: null },
      errors: [{ message: 'pod "nope" not found', locations: [{ line: 1, column: 47 }], path: ["pod"], extensions: { code: "NOT_FOUND" } }],
    });
    const invalid = await gql(`mutation { saveEndpoint(input: { name: "e", templateId: "tpl", gpuIds: "NO_SUCH_POOL" }) { id } }`);
    expect(invalid.status).toBe(200);
    expect(invalid.body.errors[0]).toMatchObject({ path: ["saveEndpoint"], extensions: { code: "VALIDATION_FAILED" } });
    expect(invalid.body.errors[0].message).toContain('unknown GPU pool "NO_SUCH_POOL"');
  });

  it("refuses what the REST bodies refuse, naming the field (the same schema checks both)", async () => {
    const refused = async (mutation: string) => {
      const res = await gql(`mutation { ${mutation} }`);
      expect(res.status).toBe(200);
      expect(res.body.errors?.[0]?.extensions.code, JSON.stringify(res.body)).toBe("VALIDATION_FAILED");
      return res.body.errors[0].extensions.errors as string[];
    };
    expect(await refused(`podFindAndDeployOnDemand(input: { imageName: "x", gpuTypeId: "NVIDIA GeForce RTX 9999" }) { id }`)).toEqual([expect.stringMatching(/^gpuTypeIds\.0: /)]);
    expect(await refused(`podFindAndDeployOnDemand(input: { imageName: "x", gpuTypeId: "NVIDIA A40", gpuCount: 0 }) { id }`)).toEqual([expect.stringMatching(/^gpuCount: /)]);
    expect(await refused(`deployCpuPod(input: { imageName: "x", instanceId: "big" }) { id }`)).toEqual([expect.stringContaining("instanceId: expected <flavor>-<vCPUs>")]);
    expect(await refused(`saveEndpoint(input: { name: "e", templateId: "tpl", workersMax: 100000 }) { id }`)).toEqual([expect.stringMatching(/^workersMax: /)]);
    expect(await refused(`saveTemplate(input: { name: "t", imageName: "x", containerDiskInGb: -1 }) { id }`)).toEqual([expect.stringMatching(/^containerDiskInGb: /)]);
    expect(await refused(`saveRegistryAuth(input: { name: "r", username: "", password: "p" }) { id }`)).toEqual(["username: expected a non-empty string"]);
    // Nothing of it was made.
    expect((await e.get("/v2/pods")).body.pods).toEqual([]);
    expect((await e.get("/v1/endpoints")).body).toEqual([]);
  });

  it("400 for a document that does not parse or validate, for variables of the wrong type, and for a body that is not a query", async () => {
    const parse = await gql("{ myself { id ");
    expect(parse.status).toBe(400);
    expect(parse.body.errors[0]).toMatchObject({ message: expect.stringContaining("Syntax Error"), extensions: { code: "GRAPHQL_PARSE_FAILED" } });
    const invalid = await gql("{ myself { nope } }");
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0]).toMatchObject({ message: 'Cannot query field "nope" on type "User".', extensions: { code: "GRAPHQL_VALIDATION_FAILED" } });
    const variables = await gql("query ($id: String!) { pod(input: { podId: $id }) { id } }", { id: 42 });
    expect(variables.status).toBe(400);
    expect(variables.body.errors[0].extensions.code).toBe("BAD_USER_INPUT");
    expect((await e.request("POST", "/graphql", "not json")).status).toBe(400);
    expect((await e.request("POST", "/graphql", { variables: {} })).body.errors[0].message).toContain('expected "query"');
  });

  it("refuses a query too deep or too big with 400 before running it", async () => {
    const deep = `{ myself { ${"pods { machine { podHostId } } ".repeat(1)} endpoints { template { env { key } } } } }`;
    expect((await gql(deep)).status).toBe(200);
    let nested = "__typename";
    for (let i = 0; i < GRAPHQL_LIMITS.depth + 1; i++) nested = `__schema { queryType { name } } a${i}: myself { id } ` + `q${i}: __type(name: "Pod") { ofType { ${nested} } }`;
    const tooDeep = await gql(`{ ${nested} }`);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.errors[0]).toMatchObject({
      message: `the query nests ${GRAPHQL_LIMITS.depth + 1} levels deep; minipod takes at most ${GRAPHQL_LIMITS.depth}`,
      extensions: { code: "QUERY_TOO_COMPLEX" },
    });
    // Fragments multiply: 3 spreads of 3 spreads of ... selects far more fields than the text holds.
    const fan = `{ ...F5 } fragment F0 on Query { myself { id } } ${[1, 2, 3, 4, 5].map((i) => `fragment F${i} on Query { ${"...F" + (i - 1) + " "}a${i}: myself { id } b${i}: __typename ${Array.from({ length: 8 }, () => `...F${i - 1}`).join(" ")} }`).join(" ")}`;
    const tooBig = await gql(fan);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors[0].message).toContain(`more than ${GRAPHQL_LIMITS.fields} fields`);
    const tooLong = await gql(`{ myself { id } } # ${"x".repeat(GRAPHQL_LIMITS.queryChars)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors[0].extensions.code).toBe("QUERY_TOO_LARGE");
    const tokens = await gql(`{ ${"x ".repeat(GRAPHQL_LIMITS.tokens)} }`);
    expect(tokens.status).toBe(400);
    expect(tokens.body.errors[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
  });

  it("refuses a query that costs more than the bound (fields × the lists they are under) before running it", async () => {
    const aliases = (n: number, body: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${body}`).join(" ")} }`;
    // 39.5 KB that answered 1.27 MB after 0.7 s of CPU: within the bounds on fields and depth.
    const lowest = "gpuTypes { lowestPrice(input: { gpuCount: 1 }) { stockStatus } }";
    const costly = await gql(aliases(660, lowest));
    expect(costly.status).toBe(400);
    const perAlias = 1 + GPU_TYPES.length * (15 + 1);
    expect(costly.body.errors[0]).toMatchObject({ extensions: { code: "QUERY_TOO_COMPLEX" } });
    expect(costly.body.errors[0].message).toMatch(new RegExp(`^the query costs ${(660 * perAlias).toLocaleString("en-US")} \\(fields resolved, each counted once per item of the lists it is under.*minipod takes at most ${GRAPHQL_MAX_COST.toLocaleString("en-US")}`));
    // The most aliases within the bound still run; one more is refused.
    const most = Math.floor(GRAPHQL_MAX_COST / perAlias);
    const within = await gql(aliases(most, lowest));
    expect(within.status).toBe(200);
    expect(within.body.data[`a${most - 1}`]).toHaveLength(GPU_TYPES.length);
    expect((await gql(aliases(most + 1, lowest))).status).toBe(400);
    // An account's lists count 10 items each: myself { pods { id env } } costs 1 + 1 + 10 × (1 + 1 + 10).
    expect((await gql(aliases(20, "myself { pods { id env } }"))).status).toBe(200);
    expect((await gql(aliases(250, "myself { pods { id env } }"))).body.errors[0].message).toMatch(/^the query costs 30,500 /);
  });
});

describe("who may ask", () => {
  it("401 for an unknown or malformed key, from the header or ?api_key=", async () => {
    expect((await gql("{ myself { id } }", undefined, { authorization: "Bearer nope" })).status).toBe(401);
    expect((await gql("{ myself { id } }", undefined, { authorization: "Basic abc" })).status).toBe(401);
    const query = encodeURIComponent("{ myself { id } }");
    expect((await e.app.request(`http://minipod.test/graphql?api_key=nope&query=${query}`)).status).toBe(401);
    const ok = await e.app.request(`http://minipod.test/graphql?api_key=${API_KEY}`, { method: "POST", body: JSON.stringify({ query: "{ myself { id } }" }) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { myself: { id: "user_minipod" } } });
  });

  it("writes no key of the URL and no password of an input into the log", async () => {
    const lines: string[] = [];
    const logged = await inProcess({ config, logLevel: "debug", log: (line) => lines.push(line) });
    try {
      const url = `http://minipod.test/graphql?api_key=${API_KEY}`;
      const res = await logged.app.request(url, {
        method: "POST",
        body: JSON.stringify({ query: 'mutation { saveRegistryAuth(input: { name: "r", username: "u", password: "hunter2-secret" }) { id name } }' }),
      });
      expect(await res.json()).toEqual({ data: { saveRegistryAuth: { id: expect.any(String), name: "r" } } });
      await logged.app.request(url, { method: "POST", body: JSON.stringify({ query: 'mutation { saveRegistryAuth(input: { name: "r", username: "u", password: "hunter2-secret" }) { id } }' }) });
      expect(lines.some((l) => l.includes("POST /graphql"))).toBe(true);
      expect(lines.join("\n")).not.toContain(API_KEY);
      expect(lines.join("\n")).not.toContain("hunter2");
    } finally {
      logged.close();
    }
  });

  it("without a key, the public catalog answers and the account is refused in errors[]", async () => {
    const res = await anonymous(`{ serverlessGpuPools { id } myself { id } }`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.data.serverlessGpuPools).toContainEqual({ id: "AMPERE_16" });
    expect(body.data.myself).toBeNull();
    expect(body.errors[0]).toMatchObject({ path: ["myself"], extensions: { code: "UNAUTHENTICATED" } });
    const mutation = await anonymous(`mutation { podStop(input: { podId: "x" }) { id } }`);
    expect(((await mutation.json()) as any).errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });

  it("a mutation needs rest:write (403), a query rest:read", async () => {
    expect((await gql("{ myself { id } }", undefined, { authorization: "Bearer reader" })).status).toBe(200);
    const res = await gql(`mutation { podStop(input: { podId: "x" }) { id } }`, undefined, { authorization: "Bearer reader" });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('scope "rest:write"');
  });

  it("counts against the key's REST quota", async () => {
    const limited = await inProcess({ config: { ...config, rateLimits: { rest: { minute: 2 } } } });
    try {
      const ask = () => limited.request("POST", "/graphql", { query: "{ myself { id } }" });
      expect((await ask()).headers.get("ratelimit")).toBeTruthy();
      await limited.get("/v2/pods");
      const refused = await ask();
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBeTruthy();
    } finally {
      limited.close();
    }
  });
});

describe("GET /graphql", () => {
  it("runs a query from the URL, and refuses a mutation with 405", async () => {
    const q = (s: string) => e.get(`/graphql?query=${encodeURIComponent(s)}&variables=${encodeURIComponent(JSON.stringify({ id: "NVIDIA L4" }))}`);
    const res = await q(`query ($id: String) { gpuTypes(input: { id: $id }) { id memoryInGb } }`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { gpuTypes: [{ id: "NVIDIA L4", memoryInGb: 24 }] } });
    const mutation = await q(`mutation { podStop(input: { podId: "x" }) { id } }`);
    expect(mutation.status).toBe(405);
    expect(mutation.headers.get("allow")).toBe("POST");
  });
});

describe("GET /docs/graphql", () => {
  it("serves GraphiQL from the installed packages, under a policy that keeps it on the emulator", async () => {
    const page = await e.app.request("http://minipod.test/docs/graphql");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const html = await page.text();
    const scripts = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(html).toContain('rel="icon"');
    expect(scripts).toEqual([
      "/docs/graphql/assets/react.production.min.js",
      "/docs/graphql/assets/react-dom.production.min.js",
      "/docs/graphql/assets/graphiql.min.js",
      "/docs/graphql/assets/init.js",
    ]);
    for (const src of [...scripts, "/docs/graphql/assets/graphiql.min.css"]) {
      const asset = await e.app.request(`http://minipod.test${src}`);
      expect(asset.status, src).toBe(200);
      expect((await asset.text()).length, src).toBeGreaterThan(100);
    }
    // Every URL the page loads is the emulator's own.
    expect(html).not.toMatch(/https?:\/\//);
    expect(await (await e.app.request("http://minipod.test/docs/graphql/assets/init.js")).text()).toContain('url: "/graphql"');
    expect((await e.app.request("http://minipod.test/docs/graphql/assets/nope.js")).status).toBe(404);
    // The API reference links to it.
    expect(await (await e.app.request("http://minipod.test/docs")).text()).toContain('<a href="/docs/graphql">');
  });
});
