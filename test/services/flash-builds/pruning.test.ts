import { afterEach, describe, expect, it } from "vitest";
import { FLASH_ARTIFACT_PIECE_BYTES } from "../../../src/services/flash-builds/model.js";
import { inProcess, type InProcess } from "../../support/in-process.js";

/**
 * The builds of a Flash app are bounded by `flashBuildsPerApp`: a new build past it removes the
 * oldest build no environment has deployed, and its artifact's pieces are freed one a turn; a
 * deployed build stays, even past the bound.
 */
let e: InProcess;
afterEach(() => e?.close());

const SIZE = 2 * FLASH_ARTIFACT_PIECE_BYTES + 100;

const ok = async (query: string, variables: Record<string, unknown> = {}) => {
  const res = await e.request("POST", "/graphql", { query, variables });
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data;
};

const pieces = () => e.core.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM document_pieces`).get()!.n;
const artifacts = () => e.core.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE kind = 'flash-artifact'`).get()!.n;

/** Lets the event loop turn until `done()` holds (at most a few thousand turns). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 5000 && !done(); i++) await new Promise((r) => setImmediate(r));
  expect(done()).toBe(true);
}

async function app(name: string) {
  const created = (await ok(`mutation { createFlashApp(input: { name: "${name}" }) { id } }`)).createFlashApp;
  const env = (await ok(`mutation { createFlashEnvironment(input: { flashAppId: "${created.id}", name: "production" }) { id } }`)).createFlashEnvironment;
  return { appId: created.id as string, envId: env.id as string };
}

/** An artifact uploaded and its build finalized: the build's id and object key. */
async function build(appId: string) {
  const upload = (await ok(`mutation { prepareFlashArtifactUpload(input: { flashAppId: "${appId}", tarballSize: ${SIZE} }) { uploadUrl objectKey } }`)).prepareFlashArtifactUpload;
  const put = await e.app.request(upload.uploadUrl, { method: "PUT", body: Buffer.alloc(SIZE, 7) });
  expect(put.status).toBe(200);
  const made = (await ok(`mutation F($input: FinalizeFlashArtifactUploadInput!) { finalizeFlashArtifactUpload(input: $input) { id } }`, {
    input: { flashAppId: appId, objectKey: upload.objectKey, manifest: { version: "1.0", resources: {} } },
  })).finalizeFlashArtifactUpload;
  return { id: made.id as string, key: upload.objectKey as string };
}

const deploy = (envId: string, buildId: string) =>
  ok(`mutation D($input: DeployBuildToEnvironmentInput!) { deployBuildToEnvironment(input: $input) { id } }`, { input: { flashEnvironmentId: envId, flashBuildId: buildId } });

const buildIds = async (appId: string) =>
  ((await ok(`query { flashApp(flashAppId: "${appId}") { flashBuilds { id } } }`)).flashApp.flashBuilds as Array<{ id: string }>).map((b) => b.id).sort();

describe("the builds of a Flash app, bounded by flashBuildsPerApp", () => {
  it("a build past the bound removes the oldest one not deployed, and frees its artifact a piece a turn", async () => {
    e = await inProcess({ config: { flashBuildsPerApp: 2 } });
    const { appId, envId } = await app("qs");
    const first = await build(appId);
    await deploy(envId, first.id);
    const second = await build(appId);
    expect(pieces()).toBe(6);
    const third = await build(appId);
    // The first is deployed: the second goes, its artifact at once, its pieces over turns.
    expect(await buildIds(appId)).toEqual([first.id, third.id].sort());
    expect((await e.app.request(`http://minipod.test/flash/artifacts/${second.key}`)).status).toBe(404);
    await turnsUntil(() => pieces() === 6 && artifacts() === 2);
    expect((await e.app.request(`http://minipod.test/flash/artifacts/${first.key}`)).status).toBe(200);

    // Once the third is deployed in its place, the first is the oldest not deployed.
    await deploy(envId, third.id);
    const fourth = await build(appId);
    expect(await buildIds(appId)).toEqual([third.id, fourth.id].sort());
    await turnsUntil(() => pieces() === 6 && artifacts() === 2);
    const gone = await e.request("POST", "/graphql", { query: `query { flashBuild(flashBuildId: "${first.id}") { id } }` });
    expect(gone.body.errors?.[0]?.message).toMatch(/not found/);
    // Another app's builds are its own.
    const other = await app("other");
    await build(other.appId);
    expect(await buildIds(appId)).toEqual([third.id, fourth.id].sort());
  });

  it("deployed builds stay past the bound; the default keeps ten", async () => {
    e = await inProcess({ config: { flashBuildsPerApp: 1 } });
    const a = await app("a");
    const one = await build(a.appId);
    await deploy(a.envId, one.id);
    const envB = (await ok(`mutation { createFlashEnvironment(input: { flashAppId: "${a.appId}", name: "staging" }) { id } }`)).createFlashEnvironment;
    const two = await build(a.appId);
    await deploy(envB.id, two.id);
    const three = await build(a.appId);
    // Both older builds are deployed: the app keeps three.
    expect(await buildIds(a.appId)).toEqual([one.id, two.id, three.id].sort());
    await e.close();

    e = await inProcess({ config: {} });
    const c = await app("c");
    const made = [];
    for (let i = 0; i < 11; i++) made.push((await build(c.appId)).id);
    expect(await buildIds(c.appId)).toEqual(made.slice(1).sort());
  });
});
