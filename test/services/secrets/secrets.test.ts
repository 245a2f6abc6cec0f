import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { API_KEY, inProcess, type InProcess } from "../../support/in-process.js";

/**
 * Secrets, network volumes and an endpoint's aiKey on the GraphQL API, as the SDK 2.x sends them
 * (`rp secret add/list/delete`, `Secret(...)` env values, `Volume(...)`, `rp flash dev`'s metrics).
 */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: {} });
});
afterEach(() => e.close());

const gql = async (query: string, variables: Record<string, unknown> = {}, key = API_KEY) => (await e.request("POST", "/graphql", { query, variables }, { authorization: `Bearer ${key}` })).body;

const CREATE = "mutation secretCreate($input: SecretCreateInput!) { secretCreate(input: $input) { id name } }";
const LIST = "query mySecrets { myself { secrets { id name description createdAt } } }";
const DELETE = "mutation secretDelete($id: ID!) { secretDelete(id: $id) }";

describe("secrets", () => {
  it("secretCreate, then myself { secrets } lists it without its value; secretDelete removes it", async () => {
    const created = await gql(CREATE, { input: { name: "hf-token", value: "s3cr3t", description: "" } });
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    const { id } = created.data.secretCreate;
    const listed = await gql(LIST);
    expect(listed.data.myself.secrets).toEqual([{ id, name: "hf-token", description: "", createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    // No field of any answer shows the value, nor does an export of the state.
    expect(JSON.stringify(listed)).not.toContain("s3cr3t");
    const exported = await e.request("GET", "/_emulator/export");
    expect(exported.status).toBe(200);
    expect(exported.text).toContain("hf-token");
    expect(exported.text).not.toContain("s3cr3t");
    expect((await gql(DELETE, { id })).errors).toBeUndefined();
    expect((await gql(LIST)).data.myself.secrets).toEqual([]);
  });

  it("a second secret of the same name, a name the service would not take, an unknown id: errors naming the problem", async () => {
    await gql(CREATE, { input: { name: "token", value: "a" } });
    expect((await gql(CREATE, { input: { name: "token", value: "b" } })).errors[0].message).toContain('a secret named "token" already exists');
    expect((await gql(CREATE, { input: { name: "no spaces", value: "b" } })).errors[0].message).toContain("$.name: expected 1 to 128 letters");
    const unknown = await gql(DELETE, { id: "nope" });
    expect(unknown.errors[0]).toMatchObject({ message: 'secret "nope" not found', extensions: { code: "NOT_FOUND" } });
  });

  it("an endpoint's env shows the reference, never the value", async () => {
    await gql(CREATE, { input: { name: "hf-token", value: "s3cr3t" } });
    const save = `mutation($input: EndpointInput) { saveEndpoint(input: $input) { id template { env { key value } } } }`;
    const input = { name: "app", template: { name: "t", imageName: "me/worker:1", env: [{ key: "TOKEN", value: "{{ RUNPOD_SECRET_hf-token }}" }] } };
    const saved = await gql(save, { input });
    expect(saved.errors, JSON.stringify(saved.errors)).toBeUndefined();
    expect(saved.data.saveEndpoint.template.env).toEqual([{ key: "TOKEN", value: "{{ RUNPOD_SECRET_hf-token }}" }]);
    const v1 = await e.get(`/v1/endpoints/${saved.data.saveEndpoint.id}?includeTemplate=true`);
    expect(JSON.stringify(v1.body)).not.toContain("s3cr3t");
  });

  it("the value is substituted for each reference of an env, a missing one named and left as written", () => {
    const secrets = e.core.services.secrets;
    secrets.create({ name: "a", value: "1" });
    const { env, missing } = secrets.substitute({ X: "{{ RUNPOD_SECRET_a }}", Y: "pre-{{RUNPOD_SECRET_a}}-{{ RUNPOD_SECRET_b }}", Z: "plain" });
    expect(env).toEqual({ X: "1", Y: "pre-1-{{ RUNPOD_SECRET_b }}", Z: "plain" });
    expect(missing).toEqual(["b"]);
  });
});

describe("createNetworkVolume, as the SDK 2.x sends it for a Volume", () => {
  const MUTATION = "mutation createNetworkVolume($input: CreateNetworkVolumeInput!) { createNetworkVolume(input: $input) { id name size dataCenterId } }";

  it("creates the volume of /v2/network-volumes, in a data center the SDK lists", async () => {
    const res = await gql(MUTATION, { input: { name: "models", size: 20, dataCenterId: "US-MO-1" } });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const volume = res.data.createNetworkVolume;
    expect(volume).toMatchObject({ name: "models", size: 20, dataCenterId: "US-MO-1" });
    expect((await e.get(`/v2/network-volumes/${volume.id}`)).body).toMatchObject({ name: "models", size: 20, dataCenter: "US-MO-1" });
    const listed = await gql("{ myself { networkVolumes { id name size dataCenterId } } }");
    expect(listed.data.myself.networkVolumes).toContainEqual(volume);
  });

  it("a size out of bounds is refused naming it", async () => {
    const res = await gql(MUTATION, { input: { name: "m", size: 5, dataCenterId: "EU-CZ-1" } });
    expect(res.errors[0].message).toContain("$.size: expected an integer number of GB");
  });
});

describe("an endpoint's aiKey", () => {
  it("is the key of whoever asks, which /v2/{id}/metrics then takes", async () => {
    const save = "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id aiKey } }";
    const saved = await gql(save, { input: { name: "m", template: { name: "t", imageName: "me/worker:1" } } });
    expect(saved.data.saveEndpoint.aiKey).toBe(API_KEY);
    expect((await gql("{ myself { endpoints { aiKey } } }", {}, "other-key")).data.myself.endpoints).toEqual([{ aiKey: "other-key" }]);
    const metrics = await e.request("GET", `/v2/${saved.data.saveEndpoint.id}/metrics`, undefined, { authorization: `Bearer ${saved.data.saveEndpoint.aiKey}` });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatchObject({ workers: { ready: 0 } });
  });
});
