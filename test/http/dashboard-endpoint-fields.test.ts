import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

// The dashboard's endpoint card lists the endpoint's fields from its management resource's v2
// view (GET /v2/serverless/{id}), so a field added to the view shows there with no edit of the page.

/** The fields of the card of endpoint `id`: name → text. */
function cardFields(html: string, id: string): Record<string, string> {
  const card = html.split('<article class="endpoint"').find((part) => part.startsWith(` data-endpoint="${id}"`)) ?? "";
  return Object.fromEntries([...card.matchAll(/<div data-field="([^"]+)"><dt>[^<]*<\/dt><dd>([^<]*)<\/dd><\/div>/g)].map((m) => [m[1]!, m[2]!]));
}

describe("the dashboard's endpoint card", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config: { endpoints: [{ id: "echo", handler: "echo" }] } });
  });
  afterEach(() => e.close());

  it("shows every field of the endpoint's v2 view but its env and request URLs", async () => {
    const created = await e.post("/v2/serverless", {
      name: "inference",
      type: "QUEUE",
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      gpu: { pools: ["ADA_24"], minCudaVersion: "12.8" },
      image: "me/worker:1",
      flashboot: "FLASHBOOT",
      env: { API_TOKEN: "token-never-on-the-page" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const view = (await e.get(`/v2/serverless/${id}`)).body as Record<string, unknown>;

    const page = await e.get("/_dashboard/panels/endpoints");
    expect(page.status).toBe(200);
    const fields = cardFields(page.text, id);
    const expected = Object.keys(view).filter((k) => !["id", "name", "env", "requestUrls"].includes(k));
    expect(Object.keys(fields).sort()).toEqual(expected.sort());
    expect(fields.flashboot).toBe("FLASHBOOT");
    expect(fields.gpu).toContain("minCudaVersion=12.8");
    expect(fields.image).toBe("me/worker:1");
    expect(page.text).not.toContain("token-never-on-the-page");
  });

  it("shows the fields of an endpoint the config declares", async () => {
    const fields = cardFields((await e.get("/")).text, "echo");
    expect(fields.type).toBe("QUEUE");
    expect(fields.workers).toMatch(/^min=\d+ · max=\d+/);
  });
});
