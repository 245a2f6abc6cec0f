import { describe, expect, it } from "vitest";
import { ServicePaths } from "../../src/http/surfaces.js";
import { REST_V2_COLLECTIONS } from "../../src/services/index.js";

const classifyServiceRoute = (method: string, path: string) => new ServicePaths(REST_V2_COLLECTIONS).classify(method, path);

describe("service surfaces", () => {
  it("tells REST, queue and worker routes apart and names the scope each needs", () => {
    const cases: Array<[string, string, string, string, string | undefined, string | undefined]> = [
      ["POST", "/v2/echo/run", "queue", "queue:write", "echo", "run"],
      ["GET", "/v2/echo/status/abc", "queue", "queue:read", "echo", "status"],
      ["HEAD", "/v2/echo/health", "queue", "queue:read", "echo", "health"],
      ["GET", "/v2/echo", "queue", "queue:read", "echo", undefined],
      ["GET", "/v2/echo/job-take/w1", "worker", "worker", "echo", "job-take"],
      ["POST", "/v2/echo/job-done/w1", "worker", "worker", "echo", "job-done"],
      ["GET", "/v2/network-volumes", "rest", "rest:read", undefined, undefined],
      ["POST", "/v2/network-volumes", "rest", "rest:write", undefined, undefined],
      ["DELETE", "/v2/pods/p1", "rest", "rest:write", undefined, undefined],
      ["GET", "/v2/billing/pods", "rest", "rest:read", undefined, undefined],
      ["PATCH", "/v1/endpoints/e1", "rest", "rest:write", undefined, undefined],
      ["GET", "/v2", "rest", "rest:read", undefined, undefined],
    ];
    for (const [method, path, surface, scope, endpointId, operation] of cases) {
      expect(classifyServiceRoute(method, path), `${method} ${path}`).toEqual({ surface, scope, endpointId, operation });
    }
  });
});
