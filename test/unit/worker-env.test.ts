import { describe, expect, it } from "vitest";
import { workerEnv } from "../../src/launch/worker-process.js";

describe("the environment minipod worker gives a worker", () => {
  it("is the platform's: job id in the result URLs' path, $ID and $RUNPOD_POD_ID left for the library", () => {
    expect(workerEnv({ url: "http://127.0.0.1:8080/", endpoint: "gpu-box", workerId: "w1", key: "k", pingIntervalMs: 10_000 })).toEqual({
      RUNPOD_WEBHOOK_GET_JOB: "http://127.0.0.1:8080/v2/gpu-box/job-take/$ID?gpu=minipod",
      RUNPOD_WEBHOOK_POST_OUTPUT: "http://127.0.0.1:8080/v2/gpu-box/job-done/$RUNPOD_POD_ID/$ID?gpu=minipod",
      RUNPOD_WEBHOOK_POST_STREAM: "http://127.0.0.1:8080/v2/gpu-box/job-stream/$RUNPOD_POD_ID/$ID?gpu=minipod",
      RUNPOD_WEBHOOK_PING: "http://127.0.0.1:8080/v2/gpu-box/ping/$RUNPOD_POD_ID",
      RUNPOD_AI_API_KEY: "k",
      RUNPOD_POD_ID: "w1",
      RUNPOD_POD_HOSTNAME: "w1-minipod",
      RUNPOD_ENDPOINT_ID: "gpu-box",
      RUNPOD_PING_INTERVAL: "10000",
      RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: "true",
      RUNPOD_SKIP_GPU_CHECK: "true",
      RUNPOD_API_BASE_URL: "http://127.0.0.1:8080",
      RUNPOD_ENDPOINT_BASE_URL: "http://127.0.0.1:8080/v2",
      RUNPOD_REST_API_URL: "http://127.0.0.1:8080/v1",
      RUNPOD_HAPI_URL: "http://127.0.0.1:8080",
      RUNPOD_CONSOLE_URL: "http://127.0.0.1:8080",
    });
  });

  it("asks for the endpoint's batch requests when it is a batch worker (the library appends &job_in_progress after it)", () => {
    const env = workerEnv({ url: "http://127.0.0.1:8080", endpoint: "gpu-box", workerId: "b1", key: "k", pingIntervalMs: 10_000, batch: true });
    expect(env.RUNPOD_WEBHOOK_GET_JOB).toBe("http://127.0.0.1:8080/v2/gpu-box/job-take/$ID?gpu=minipod&pool=batch");
    expect(env.RUNPOD_WEBHOOK_POST_OUTPUT).toBe("http://127.0.0.1:8080/v2/gpu-box/job-done/$RUNPOD_POD_ID/$ID?gpu=minipod");
  });
});
