import { beforeAll, describe, expect, it } from "vitest";
import { buildEmulator } from "../../src/compose/emulator.js";
import { checkV2Answer, inProcess } from "../support/in-process.js";
import { coverageTable, documentedTable } from "./coverage.js";
import { tour, type Visit } from "./tour.js";
import { contract, DESCRIPTION_FILE, DESCRIPTION_MISSING, EXCEPTIONS } from "./v2-contract.js";

/**
 * minipod against the service's published REST v2 description. Every v2 REST answer of every
 * in-process test is checked by the test helper (test/support/in-process.ts); here, a tour calls
 * every operation, and the checker itself is shown to catch an answer that drifts. The description
 * is read where it is kept (../shared/spec/); where that folder is absent, this file says so and skips.
 */
if (!DESCRIPTION_FILE) console.warn(`test/contract/v2-conformance.test.ts ${DESCRIPTION_MISSING}`);

describe.skipIf(!DESCRIPTION_FILE)("REST v2 conformance", () => {
  let visits: Visit[];
  beforeAll(async () => {
    visits = await tour();
  }, 120_000);

  it("answers every operation of the description, successfully, as the description says", () => {
    const { operations } = contract();
    const missing = operations.filter((o) => !visits.some((v) => v.operationId === o.operationId && v.status >= 200 && v.status < 300)).map((o) => o.operationId);
    expect(missing).toEqual([]);
    expect(operations).toHaveLength(53);
  });

  it("answers the errors a client can cause in the description's form", () => {
    const statuses = new Set(visits.map((v) => v.status));
    for (const status of [400, 401, 403, 404, 409, 429]) expect(statuses, String(status)).toContain(status);
  });

  it("sends RateLimit headers on every answer to an authenticated key", () => {
    const missing = visits.filter((v) => v.status !== 401 && !v.rateLimited).map((v) => `${v.method} ${v.path} ${v.status}`);
    expect(missing).toEqual([]);
  });

  it("catches an answer that drifts from the description", async () => {
    const { check } = contract();
    const e = await inProcess();
    try {
      const res = await e.post("/v2/network-volumes", { name: "v", size: 10, dataCenter: "EU-RO-1" });
      const answer = (status: number, body: unknown, type = "application/json") => ({
        method: "POST",
        path: "/v2/network-volumes",
        status,
        headers: new Headers({ "content-type": type }),
        body: JSON.stringify(body),
      });
      expect(check(answer(201, res.body)).problems).toEqual([]);
      const { type: _type, ...noType } = res.body;
      expect(check(answer(201, noType)).problems).toEqual(["createNetworkVolume (POST /v2/network-volumes) answered 201: body must have required property 'type'"]);
      expect(check(answer(201, { ...res.body, size: "10" })).problems).toEqual(["createNetworkVolume (POST /v2/network-volumes) answered 201: body/size must be integer"]);
      expect(check(answer(200, res.body)).problems).toEqual(["createNetworkVolume (POST /v2/network-volumes) answered 200: the description declares 201, 400, 401, 403, 422, 429, default"]);
      expect(check(answer(201, res.body, "text/plain")).problems[0]).toMatch(/content type "text\/plain"/);
      expect(check(answer(404, { title: "Not Found" }, "application/problem+json")).problems).toEqual([
        "createNetworkVolume (POST /v2/network-volumes) answered 404: body must have required property 'status'",
        "createNetworkVolume (POST /v2/network-volumes) answered 404: body must have required property 'detail'",
      ]);
      const rateLimit = { ...answer(201, res.body), headers: new Headers({ "content-type": "application/json", RateLimit: "minute=5" }) };
      expect(check(rateLimit).problems).toEqual(['createNetworkVolume (POST /v2/network-volumes) answered 201: header RateLimit "minute=5" is not the structured list the description shows']);
      // The helper every HTTP test goes through fails the test on such an answer.
      expect(() => checkV2Answer("POST", "/v2/network-volumes", 201, new Headers({ "content-type": "application/json" }), JSON.stringify(noType))).toThrow(
        /does not match the service's REST v2 description:\n {2}createNetworkVolume .* body must have required property 'type'/,
      );
    } finally {
      e.close();
    }
  });

  it("loosens the check only where the description contradicts itself", () => {
    expect(EXCEPTIONS.map((x) => `${x.schema}.${x.property}`)).toEqual(["QueueBasedRequestUrls.status", "QueueBasedRequestUrls.stream", "QueueBasedRequestUrls.cancel", "QueueBasedRequestUrls.retry"]);
  });

  it("keeps the coverage table of docs/management-rest.md up to date (npm run coverage:v2 -- --write)", async () => {
    const { core, app } = await buildEmulator({ clock: "manual" });
    const served = new Set(app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, "{$1}")}`));
    core.close();
    expect(documentedTable()).toBe(coverageTable(visits, served));
  });
});
