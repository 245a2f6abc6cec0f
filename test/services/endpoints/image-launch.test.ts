import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { imageLauncher } from "../../../src/compose/image-launch.js";
import { API_KEY, inProcess, type InProcess } from "../../support/in-process.js";

// What an endpoint's worker processes run (its image's command, the template's env with secrets
// substituted) is read for every queued job: kept per endpoint, and read again after any change
// of the endpoint, its template, a secret, or a snapshot restored.

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: {} });
});
afterEach(() => e.close());

const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const body = (await e.request("POST", "/graphql", { query, variables }, { authorization: `Bearer ${API_KEY}` })).body as { data: any; errors?: unknown };
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
};
const SAVE = "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id templateId } }";
const TEMPLATE = "mutation($input: SaveTemplateInput) { saveTemplate(input: $input) { id } }";
const IMAGES = { images: [{ image: "acme/worker:*", command: ["python3", "handler.py"], env: {} }] };

describe("an endpoint's launch", () => {
  it("is kept while nothing changes, and read again after the template, a secret, the endpoint or a restore changed", async () => {
    const launch = imageLauncher(e.core, IMAGES, "/");
    const env = [{ key: "TOKEN", value: "{{ RUNPOD_SECRET_tok }}" }];
    const saved = (await gql(SAVE, { input: { name: "a", template: { name: "t", imageName: "acme/worker:1", env } } })).saveEndpoint;
    const first = launch(saved.id);
    expect(first?.env.TOKEN).toBe("{{ RUNPOD_SECRET_tok }}");
    expect(launch(saved.id)).toBe(first);

    await gql("mutation($input: SecretCreateInput!) { secretCreate(input: $input) { id } }", { input: { name: "tok", value: "s1" } });
    expect(launch(saved.id)?.env.TOKEN).toBe("s1");

    const template = { id: saved.templateId, name: "t", imageName: "acme/worker:1", containerDiskInGb: 5, dockerArgs: "", env: [...env, { key: "MORE", value: "x" }], volumeInGb: 0 };
    await gql(TEMPLATE, { input: template });
    expect(launch(saved.id)?.env).toMatchObject({ TOKEN: "s1", MORE: "x" });

    expect((await e.post("/_emulator/snapshots/before", {})).status).toBe(200);
    await gql(TEMPLATE, { input: { ...template, imageName: "other/image:1" } });
    expect(launch(saved.id)).toBeUndefined();
    expect((await e.post("/_emulator/snapshots/before/restore", {})).status).toBe(200);
    expect(launch(saved.id)?.env.MORE).toBe("x");

    await gql("mutation($id: String!) { deleteEndpoint(id: $id) }", { id: saved.id });
    expect(launch(saved.id)).toBeUndefined();
  });

  it("of minipod's own images takes MINIPOD_PYTHON and PYTHONPATH as they were when minipod started", async () => {
    vi.stubEnv("MINIPOD_PYTHON", "/opt/py/bin/python");
    vi.stubEnv("PYTHONPATH", "/opt/lib");
    try {
      const launch = imageLauncher(e.core, { images: [] }, "/");
      const saved = (await gql(SAVE, { input: { name: "f", template: { name: "f", imageName: "runpod/flash-cpu:py3.12-latest" } } })).saveEndpoint;
      const first = launch(saved.id);
      expect(first?.command[0]).toBe("/opt/py/bin/python");
      expect(first?.env.PYTHONPATH?.split(":").at(-1)).toBe("/opt/lib");
      vi.stubEnv("MINIPOD_PYTHON", "/elsewhere/python");
      vi.stubEnv("PYTHONPATH", "/elsewhere");
      // A document changed: the launch is made again, with the same interpreter and path.
      await gql(SAVE, { input: { name: "g", template: { name: "g", imageName: "runpod/flash-cpu:py3.12-latest" } } });
      expect(launch(saved.id)).not.toBe(first);
      expect(launch(saved.id)).toEqual(first);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
