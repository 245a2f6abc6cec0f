import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { imageLauncher } from "../../../src/compose/image-launch.js";
import { FLASH_ARTIFACT_MAX_BYTES } from "../../../src/domain/limits.js";
import { endpointOfHost, lbHostPattern } from "../../../src/http/load-balancer/host-route.js";
import { inProcess, type InProcess } from "../../support/in-process.js";

/**
 * Flash apps, environments and builds as `flash deploy` and `rp flash deploy` drive them, with the
 * operations' texts as the clients send them: the app looked up by name ("not found" means create
 * it), an environment, an artifact uploaded to the URL minipod hands out, the build, its deploy,
 * the endpoints saved into the environment, and a call of the deployed app by its X-Flash headers.
 */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: {} });
});
afterEach(() => e.close());

const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const res = await e.request("POST", "/graphql", { query, variables });
  expect(res.status).toBe(200);
  return res.body as { data?: any; errors?: Array<{ message: string }> };
};
const ok = async (query: string, variables: Record<string, unknown> = {}) => {
  const body = await gql(query, variables);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
};

const APP_BY_NAME = `query getFlashAppByName($flashAppName: String!) { flashAppByName(flashAppName: $flashAppName) {
  id name flashEnvironments { id name state activeBuildId createdAt endpoints { id name } } flashBuilds { id objectKey createdAt } } }`;
const ENV_BY_NAME = `query getFlashEnvironmentByName($input: FlashEnvironmentByNameInput!) { flashEnvironmentByName(input: $input) {
  id name state activeBuildId createdAt endpoints { id name } networkVolumes { id name } } }`;
const PREPARE = `mutation PrepareArtifactUpload($input: PrepareFlashArtifactUploadInput!) { prepareFlashArtifactUpload(input: $input) { uploadUrl objectKey expiresAt } }`;
const FINALIZE = `mutation FinalizeArtifactUpload($input: FinalizeFlashArtifactUploadInput!) { finalizeFlashArtifactUpload(input: $input) { id manifest } }`;
const DEPLOY = `mutation deployBuildToEnvironment($input: DeployBuildToEnvironmentInput!) { deployBuildToEnvironment(input: $input) {
  id name activeArtifact { objectKey downloadUrl expiresAt } } }`;
const SAVE = `mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id name flashEnvironmentId } }`;

const MANIFEST = { version: "1.0", resources: { greeter: { resource_type: "CpuLiveServerless", handler_file: "handler_greeter.py" } } };
const ARTIFACT = Buffer.from("a tar.gz, as far as minipod cares");

/** An app with its default environment and one build uploaded and finalized. */
async function deployedApp(name = "qs") {
  const missing = await gql(APP_BY_NAME, { flashAppName: name });
  // runpod-flash creates the app when the message says "app not found", the SDK 2.x when it says "not found".
  expect(missing.errors?.[0]?.message).toBe(`flash app not found: there is no app named "${name}"`);
  const app = (await ok(`mutation createFlashApp($input: CreateFlashAppInput!) { createFlashApp(input: $input) { id name } }`, { input: { name } })).createFlashApp;
  const env = (await ok(`mutation createFlashEnvironment($input: CreateFlashEnvironmentInput!) { createFlashEnvironment(input: $input) { id name } }`, {
    input: { flashAppId: app.id, name: "default" },
  })).createFlashEnvironment;
  const upload = (await ok(PREPARE, { input: { flashAppId: app.id, tarballSize: ARTIFACT.length } })).prepareFlashArtifactUpload;
  const url = new URL(upload.uploadUrl);
  // As the clients send it: no Authorization.
  const put = await e.app.request(url.toString(), { method: "PUT", headers: { "content-type": "application/gzip" }, body: ARTIFACT });
  expect(put.status).toBe(200);
  const build = (await ok(FINALIZE, { input: { flashAppId: app.id, objectKey: upload.objectKey, manifest: MANIFEST } })).finalizeFlashArtifactUpload;
  return { app, env, upload, build };
}

describe("flash deploy's resources", () => {
  it("an app, an environment, an artifact uploaded to minipod's URL, a build: each as the clients read it back", async () => {
    const { app, env, upload, build } = await deployedApp();
    expect(upload.uploadUrl).toBe(`http://minipod.test/flash/artifacts/${upload.objectKey}`);
    expect(build.manifest).toEqual(MANIFEST);
    const got = (await ok(APP_BY_NAME, { flashAppName: "qs" })).flashAppByName;
    expect(got).toMatchObject({ id: app.id, name: "qs", flashEnvironments: [{ id: env.id, name: "default", state: "PENDING", activeBuildId: null, endpoints: [] }] });
    expect(got.flashBuilds).toEqual([{ id: build.id, objectKey: upload.objectKey, createdAt: expect.any(String) }]);
    expect((await ok(`query getFlashBuild($input: String!) { flashBuild(flashBuildId: $input) { id manifest } }`, { input: build.id })).flashBuild).toEqual({ id: build.id, manifest: MANIFEST });
    const apps = (await ok(`query { myself { flashApps { id name flashEnvironments { id name state createdAt activeBuildId } flashBuilds { id createdAt } } } }`)).myself.flashApps;
    expect(apps).toHaveLength(1);
    const download = await e.app.request(upload.uploadUrl);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(ARTIFACT);
    const manifest = { ...MANIFEST, resources_endpoints: {} };
    const updated = await ok(`mutation updateFlashBuildManifest($input: UpdateFlashBuildManifestInput!) { updateFlashBuildManifest(input: $input) { id manifest } }`, {
      input: { flashBuildId: build.id, manifest },
    });
    expect(updated.updateFlashBuildManifest.manifest).toEqual(manifest);
  });

  it("errors say 'not found' where the clients test for it; a second app or environment of a name is a conflict", async () => {
    const { app } = await deployedApp();
    expect((await gql(ENV_BY_NAME, { input: { flashAppId: app.id, name: "production" } })).errors?.[0]?.message).toBe('flash environment not found: app "qs" has no environment named "production"');
    expect((await gql(`query { flashApp(flashAppId: "nope") { id } }`)).errors?.[0]?.message).toMatch(/not found/);
    expect((await gql(`mutation { createFlashApp(input: { name: "qs" }) { id } }`)).errors?.[0]?.message).toMatch(/already exists/);
    expect((await gql(`mutation { createFlashEnvironment(input: { flashAppId: "${app.id}", name: "default" }) { id } }`)).errors?.[0]?.message).toMatch(/already/);
  });

  it("the upload: bounded by the size declared and minipod's limit, once, within its hour", async () => {
    const app = (await ok(`mutation { createFlashApp(input: { name: "big" }) { id } }`)).createFlashApp;
    const tooBig = await gql(PREPARE, { input: { flashAppId: app.id, tarballSize: FLASH_ARTIFACT_MAX_BYTES + 1 } });
    expect(tooBig.errors?.[0]?.message).toMatch(/tarballSize: expected the artifact's size in bytes, from 1 to/);
    const upload = (await ok(PREPARE, { input: { flashAppId: app.id, tarballSize: 4 } })).prepareFlashArtifactUpload;
    const put = (body: string) => e.app.request(upload.uploadUrl, { method: "PUT", body });
    const over = await put("12345");
    expect(over.status).toBe(413);
    expect(await over.text()).toMatch(/more than the 4 bytes declared as its tarballSize/);
    const early = await gql(FINALIZE, { input: { flashAppId: app.id, objectKey: upload.objectKey, manifest: {} } });
    expect(early.errors?.[0]?.message).toMatch(/nothing was uploaded/);
    expect((await put("123")).status).toBe(400);
    expect((await put("1234")).status).toBe(200);
    expect((await put("1234")).status).toBe(409);
    expect((await e.app.request("http://minipod.test/flash/artifacts/artifact-unknown", { method: "PUT", body: "x" })).status).toBe(404);
    const late = (await ok(PREPARE, { input: { flashAppId: app.id, tarballSize: 4 } })).prepareFlashArtifactUpload;
    await e.advance(60 * 60 * 1000 + 1);
    expect((await e.app.request(late.uploadUrl, { method: "PUT", body: "1234" })).status).toBe(403);
  });

  it("deployBuildToEnvironment makes the build active; the endpoints saved into the environment are its endpoints, and run its artifact", async () => {
    const { env, upload, build } = await deployedApp();
    const deployed = (await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: build.id } })).deployBuildToEnvironment;
    expect(deployed).toEqual({ id: env.id, name: "default", activeArtifact: { objectKey: upload.objectKey, downloadUrl: upload.uploadUrl, expiresAt: null } });
    const template = { name: "qs-greeter-template", imageName: "acme/echo:1", env: [{ key: "FLASH_RESOURCE_NAME", value: "greeter" }] };
    const saved = (await ok(SAVE, { input: { name: "greeter-fb", flashEnvironmentId: env.id, workersMax: 1, template } })).saveEndpoint;
    expect(saved).toMatchObject({ name: "greeter-fb", flashEnvironmentId: env.id });
    const got = (await ok(`query { flashEnvironment(flashEnvironmentId: "${env.id}") { state activeBuildId endpoints { id name } } }`)).flashEnvironment;
    expect(got).toEqual({ state: "HEALTHY", activeBuildId: build.id, endpoints: [{ id: saved.id, name: "greeter-fb" }] });
    expect(e.core.services.flashEnvironments.artifactOf(env.id)).toBe(upload.objectKey);
    // Deleting the environment deletes its endpoints.
    await ok(`mutation { deleteFlashEnvironment(flashEnvironmentId: "${env.id}") }`);
    expect((await gql(`query { myself { endpoint(id: "${saved.id}") { id } } }`)).errors?.[0]?.message).toMatch(/not found/);
  });

  it("the workers of an environment's endpoint get the active build's artifact, a new one at each deploy (so they start afresh)", async () => {
    const { app, env, upload, build } = await deployedApp();
    const template = { name: "t", imageName: "runpod/flash-cpu:py3.12-latest", env: [{ key: "FLASH_RESOURCE_NAME", value: "greeter" }] };
    const saved = (await ok(SAVE, { input: { name: "greeter", flashEnvironmentId: env.id, template } })).saveEndpoint;
    const launch = imageLauncher(e.core, { images: [] }, "/");
    expect(launch(saved.id)?.env.MINIPOD_FLASH_ARTIFACT).toBeUndefined();
    await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: build.id } });
    expect(launch(saved.id)?.env).toMatchObject({ FLASH_RESOURCE_NAME: "greeter", MINIPOD_FLASH_ARTIFACT: `/flash/artifacts/${upload.objectKey}` });
    const next = (await ok(PREPARE, { input: { flashAppId: app.id, tarballSize: ARTIFACT.length } })).prepareFlashArtifactUpload;
    expect((await e.app.request(next.uploadUrl, { method: "PUT", body: ARTIFACT })).status).toBe(200);
    const second = (await ok(FINALIZE, { input: { flashAppId: app.id, objectKey: next.objectKey, manifest: MANIFEST } })).finalizeFlashArtifactUpload;
    await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: second.id } });
    expect(launch(saved.id)?.env.MINIPOD_FLASH_ARTIFACT).toBe(`/flash/artifacts/${next.objectKey}`);
  });

  it("a build of another app is refused; deleting an app deletes its environments and builds", async () => {
    const one = await deployedApp("one");
    const two = await deployedApp("two");
    const refused = await gql(DEPLOY, { input: { flashEnvironmentId: one.env.id, flashBuildId: two.build.id } });
    expect(refused.errors?.[0]?.message).toMatch(/not a build of the environment's app/);
    await ok(`mutation { deleteFlashApp(flashAppId: "${one.app.id}") }`);
    expect((await gql(APP_BY_NAME, { flashAppName: "one" })).errors?.[0]?.message).toMatch(/not found/);
    expect((await gql(`query { flashBuild(flashBuildId: "${one.build.id}") { id } }`)).errors?.[0]?.message).toMatch(/not found/);
    expect((await e.app.request(one.upload.uploadUrl)).status).toBe(404);
    expect((await ok(`query { myself { flashApps { name } } }`)).myself.flashApps).toEqual([{ name: "two" }]);
  });
});

describe("calls of a deployed app: /v2/flash with the X-Flash headers", () => {
  it("go to the environment's endpoint of that name, as /run, /runsync and /status of it", async () => {
    const { env, build } = await deployedApp("qs");
    await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: build.id } });
    const saved = (await ok(SAVE, { input: { name: "greeter", flashEnvironmentId: env.id, template: { name: "t", imageName: "acme/echo:1" } } })).saveEndpoint;
    const headers = { "x-flash-app": "qs", "x-flash-environment": "default", "x-flash-endpoint": "greeter" };
    const run = await e.request("POST", "/v2/flash/run", { input: { name: "world" } }, headers);
    expect(run.status).toBe(200);
    const status = await e.request("GET", `/v2/flash/status/${run.body.id}`, undefined, headers);
    expect(status.status).toBe(200);
    expect(status.body.id).toBe(run.body.id);
    expect(e.core.jobStore.get(run.body.id)?.endpointId).toBe(saved.id);
  });

  it("are journalled once each: under the path the client called, with the endpoint the call went to, its body and its answer", async () => {
    const { env, build } = await deployedApp("qs");
    await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: build.id } });
    const saved = (await ok(SAVE, { input: { name: "greeter", flashEnvironmentId: env.id, template: { name: "t", imageName: "acme/echo:1" } } })).saveEndpoint;
    await e.request("DELETE", "/_emulator/requests");
    const headers = { "x-flash-app": "qs", "x-flash-environment": "default", "x-flash-endpoint": "greeter" };
    const run = await e.request("POST", "/v2/flash/run", { input: { name: "world" } }, headers);
    expect(run.status).toBe(200);
    const missing = await e.request("POST", "/v2/flash/run", { input: {} }, { ...headers, "x-flash-endpoint": "nope" });
    expect(missing.status).toBe(404);
    const journal = (await e.get("/_emulator/requests")).body.requests as Array<Record<string, unknown>>;
    const calls = journal.filter((r) => String(r.path).startsWith("/v2/")).sort((a, b) => Number(a.status) - Number(b.status));
    expect(calls).toEqual([
      expect.objectContaining({ method: "POST", path: "/v2/flash/run", endpoint: saved.id, operation: "run", status: 200, body: { input: { name: "world" } } }),
      expect.objectContaining({ method: "POST", path: "/v2/flash/run", endpoint: "flash", status: 404, response: expect.objectContaining({ detail: expect.stringMatching(/endpoint "nope" not found/) }) }),
    ]);
    // Found by the endpoint's filter, as the dashboard's journal panel asks.
    expect((await e.get(`/_emulator/requests?endpoint=${saved.id}`)).body.requests).toHaveLength(1);
  });

  it("pass the gate once: one authentication, one log line, one journal entry", async () => {
    const lines: string[] = [];
    e.close();
    e = await inProcess({ config: { logLevel: "info" }, log: (l: string) => lines.push(l) });
    const { env, build } = await deployedApp("qs");
    await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: build.id } });
    await ok(SAVE, { input: { name: "greeter", flashEnvironmentId: env.id, template: { name: "t", imageName: "acme/echo:1" } } });
    await e.request("DELETE", "/_emulator/requests");
    const lookup = vi.spyOn(e.core.auth, "lookup");
    const headers = { "x-flash-app": "qs", "x-flash-environment": "default", "x-flash-endpoint": "greeter" };
    const run = await e.request("POST", "/v2/flash/run", { input: { name: "world" } }, headers);
    expect(run.status).toBe(200);
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(lines.filter((l) => / \/v2\//.test(l))).toEqual([expect.stringMatching(/ POST \/v2\/flash\/run 200 [\d.]+ms$/)]);
    const journal = (await e.get("/_emulator/requests")).body.requests as Array<Record<string, unknown>>;
    expect(journal.filter((r) => String(r.path).startsWith("/v2/"))).toHaveLength(1);
    // Refused as the client called (no key): once, before it is passed on.
    lines.length = 0;
    expect((await e.request("POST", "/v2/flash/run", { input: {} }, { ...headers, authorization: "" })).status).toBe(401);
    expect(lines.filter((l) => / \/v2\//.test(l))).toEqual([expect.stringMatching(/ POST \/v2\/flash\/run 401 /)]);
  });

  it("an unknown app, environment or endpoint is a 404 naming them; missing headers a 400", async () => {
    const headers = { "x-flash-app": "qs", "x-flash-environment": "production", "x-flash-endpoint": "greeter" };
    const unknown = await e.request("POST", "/v2/flash/runsync", { input: {} }, headers);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toMatch(/not found/);
    await deployedApp("qs");
    const noEndpoint = await e.request("POST", "/v2/flash/runsync", { input: {} }, headers);
    expect(noEndpoint.status).toBe(404);
    expect(noEndpoint.text).toContain('endpoint \\"greeter\\" not found in app \\"qs\\" environment \\"production\\"');
    const bare = await e.request("POST", "/v2/flash/runsync", { input: {} });
    expect(bare.status).toBe(400);
    expect(bare.text).toMatch(/missing: x-flash-app, x-flash-environment, x-flash-endpoint/);
  });

  it("to a load-balanced resource (an @app.api class): /lb/flash/... goes to the environment's endpoint of that name", async () => {
    const { env, build } = await deployedApp("qs");
    await ok(DEPLOY, { input: { flashEnvironmentId: env.id, flashBuildId: build.id } });
    const saved = (await ok(SAVE, { input: { name: "inventory", type: "LB", flashEnvironmentId: env.id, template: { name: "t", imageName: "acme/echo:1" } } })).saveEndpoint;
    await e.request("DELETE", "/_emulator/requests");
    const headers = { "x-flash-app": "qs", "x-flash-environment": "default", "x-flash-endpoint": "inventory" };
    const pending = e.request("POST", "/lb/flash/items?full=1", { name: "apple" }, headers);
    await e.advance(1000); // the endpoint's first worker's cold start
    const added = await pending;
    expect(added.status, added.text).toBe(200);
    expect(added.body).toMatchObject({ method: "POST", path: "/items", body: { name: "apple" } });
    const journal = (await e.get("/_emulator/requests")).body.requests as Array<Record<string, unknown>>;
    expect(journal.filter((r) => String(r.path).startsWith("/lb/"))).toEqual([expect.objectContaining({ method: "POST", path: "/lb/flash/items", endpoint: saved.id, status: 200 })]);
    expect((await e.request("GET", "/lb/flash/items", undefined, { ...headers, "x-flash-endpoint": "nope" })).status).toBe(404);
    expect((await e.request("GET", "/lb/flash/items")).status).toBe(400);
  });

  it("by host, flash.{parent} is a deployed app's call (as the SDK 2.x sends an @app.api class's), other names only their endpoint's", () => {
    const pattern = lbHostPattern("127.0.0.1", []);
    const none = { specs: () => [] };
    expect(endpointOfHost("flash.127.0.0.1:8080", none, pattern)).toBe("flash");
    expect(endpointOfHost("FLASH.localhost:8080", none, pattern)).toBe("flash");
    expect(endpointOfHost("other.localhost:8080", none, pattern)).toBeUndefined();
  });

  it("without the headers, an endpoint of the config whose id is flash is served as any other", async () => {
    const own = await inProcess({ config: { endpoints: [{ id: "flash", handler: "echo" }] } });
    try {
      const run = await own.request("POST", "/v2/flash/run", { input: { said: "hi" } });
      expect(run.status).toBe(200);
      expect(own.core.jobStore.get(run.body.id)?.endpointId).toBe("flash");
      const named = await own.request("POST", "/v2/flash/runsync", { input: {} }, { "x-flash-app": "qs", "x-flash-environment": "production", "x-flash-endpoint": "greeter" });
      expect(named.status).toBe(404);
    } finally {
      await own.close();
    }
  });
});
