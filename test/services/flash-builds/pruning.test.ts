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

/** An artifact prepared and uploaded (unless `put` is false), never built: its upload URL and object key. */
async function upload(appId: string, put = true): Promise<{ uploadUrl: string; objectKey: string }> {
  const prepared = (await ok(`mutation { prepareFlashArtifactUpload(input: { flashAppId: "${appId}", tarballSize: ${SIZE} }) { uploadUrl objectKey } }`)).prepareFlashArtifactUpload;
  if (put) expect((await e.app.request(prepared.uploadUrl, { method: "PUT", body: Buffer.alloc(SIZE, 7) })).status).toBe(200);
  return prepared;
}

/** An artifact uploaded and its build finalized: the build's id and object key. */
async function build(appId: string) {
  const uploaded = await upload(appId);
  const made = (await ok(`mutation F($input: FinalizeFlashArtifactUploadInput!) { finalizeFlashArtifactUpload(input: $input) { id } }`, {
    input: { flashAppId: appId, objectKey: uploaded.objectKey, manifest: { version: "1.0", resources: {} } },
  })).finalizeFlashArtifactUpload;
  return { id: made.id as string, key: uploaded.objectKey };
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

describe("artifacts no build names, bounded by flashBuildsPerApp too", () => {
  const download = (key: string) => e.app.request(`http://minipod.test/flash/artifacts/${key}`);

  it("an app that uploads again and again without building keeps the newest, prepared or uploaded; its builds' artifacts are not counted", async () => {
    e = await inProcess({ config: { flashBuildsPerApp: 2 } });
    const { appId } = await app("uploader");
    const built = await build(appId);
    const uploads = [];
    for (let i = 0; i < 5; i++) uploads.push(await upload(appId));
    // The build's artifact and the two newest uploads stay; the older three go, their pieces over turns.
    await turnsUntil(() => artifacts() === 3 && pieces() === 9);
    for (const u of uploads.slice(0, 3)) expect((await download(u.objectKey)).status).toBe(404);
    for (const u of uploads.slice(3)) expect((await download(u.objectKey)).status).toBe(200);
    expect((await download(built.key)).status).toBe(200);
    // An old one removed can no longer be built; a kept one can.
    const finalize = (objectKey: string) =>
      e.request("POST", "/graphql", {
        query: `mutation F($input: FinalizeFlashArtifactUploadInput!) { finalizeFlashArtifactUpload(input: $input) { id } }`,
        variables: { input: { flashAppId: appId, objectKey, manifest: { version: "1.0", resources: {} } } },
      });
    expect((await finalize(uploads[0]!.objectKey)).body.errors?.[0]?.message).toMatch(/not found/);
    expect((await finalize(uploads[4]!.objectKey)).body.errors).toBeUndefined();

    // Prepared and never sent counts the same: two more leave one uploaded unbuilt artifact of the two before.
    const prepared = [await upload(appId, false), await upload(appId, false)];
    await turnsUntil(() => artifacts() === 4);
    expect((await download(uploads[3]!.objectKey)).status).toBe(404);
    for (const p of prepared) expect((await e.app.request(p.uploadUrl, { method: "PUT", body: Buffer.alloc(SIZE, 7) })).status).toBe(200);
    // Another app's artifacts are its own.
    const other = await app("other");
    await upload(other.appId);
    await turnsUntil(() => artifacts() === 5);
  });
});
