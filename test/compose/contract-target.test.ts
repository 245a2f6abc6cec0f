import { describe, expect, it, vi } from "vitest";
import { contractTarget, emulatorOnly, errorProblems, handlerError, jobProblems } from "../../src/contract.js";

/** `minipod/contract`: the target the environment names, the marking of emulator-only tests, the service's checks. */
describe("contractTarget", () => {
  it("names the target from the environment, mapping the suite's endpoint names to its ids", async () => {
    const target = await contractTarget({}, { MINIPOD_TARGET_URL: "https://api.example.test/v2/", MINIPOD_TARGET_KEY: "k", MINIPOD_TARGET_ENDPOINTS: "worker=abc123, echo = def456" });
    expect(target).toMatchObject({ remote: true, baseUrl: "https://api.example.test/v2", apiKey: "k", emulator: undefined });
    expect([target.endpoint("worker"), target.endpoint("echo")]).toEqual(["abc123", "def456"]);
    expect(() => target.endpoint("other")).toThrow('MINIPOD_TARGET_ENDPOINTS names no endpoint "other" (it has worker, echo): add other=<endpoint id>');
    await target.close();
  });

  it("refuses a target half given or malformed, saying what is missing", async () => {
    await expect(contractTarget({}, { MINIPOD_TARGET_URL: "https://api.example.test/v2" })).rejects.toThrow("MINIPOD_TARGET_KEY must hold the target's API key");
    await expect(contractTarget({}, { MINIPOD_TARGET_URL: "api.example.test", MINIPOD_TARGET_KEY: "k" })).rejects.toThrow("must be an http(s) URL up to /v2");
    await expect(contractTarget({}, { MINIPOD_TARGET_URL: "http://x/v2", MINIPOD_TARGET_KEY: "k", MINIPOD_TARGET_ENDPOINTS: "worker" })).rejects.toThrow('"worker" is not name=id');
  });

  it("starts an emulator when nothing is named, and calls it with the key", async () => {
    const target = await contractTarget({ config: { endpoints: [{ id: "echo", handler: "echo" }] } }, {});
    try {
      expect(target.remote).toBe(false);
      expect(target.baseUrl).toBe(`${target.emulator!.url}/v2`);
      expect(target.endpoint("echo")).toBe("echo");
      expect(await target.call("POST", "/echo/runsync", { input: { n: 1 } })).toMatchObject({ status: 200, body: { status: "COMPLETED", output: { n: 1 } } });
    } finally {
      await target.close();
    }
  });
});

describe("emulatorOnly", () => {
  it("is the test function itself on an emulator of the suite's own, and its skip, the reason in the name, against a named target", () => {
    const test = Object.assign(vi.fn(), { skip: vi.fn() });
    expect(emulatorOnly(test, undefined, {})).toBe(test);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    emulatorOnly(test, "fault injection", { MINIPOD_TARGET_URL: "https://api.example.test/v2" })("retries a 500", "fn");
    warn.mockRestore();
    expect(test).not.toHaveBeenCalled();
    expect(test.skip).toHaveBeenCalledWith("retries a 500 [skipped: needs fault injection, which https://api.example.test/v2 has not]", "fn");
  });
});

describe("the service's checks", () => {
  it("jobProblems holds a job to what the service answers in a status", () => {
    expect(jobProblems({ id: "j", status: "COMPLETED", delayTime: 0, executionTime: 10, output: 1, workerId: "w" }, "COMPLETED")).toEqual([]);
    expect(jobProblems({ id: "j", status: "FAILED", error: "boom" }, "FAILED")).toEqual([]);
    expect(jobProblems({ id: "j", status: "TIMED_OUT" }, "TIMED_OUT")).toEqual([]);
    expect(jobProblems({ id: "", status: "FAILED", error: "x" }, "COMPLETED")).toEqual([
      'id: expected a non-empty string, got ""',
      "status: expected COMPLETED, got \"FAILED\" (error: x)",
      "delayTime: a COMPLETED job reports it",
      "executionTime: a COMPLETED job reports it",
    ]);
    expect(jobProblems({ id: "j", status: "FAILED", error: { message: "x" }, delayTime: 1.5 }, "FAILED")).toEqual([
      "delayTime: expected an integer of ms, got 1.5",
      'error: a FAILED job carries its error as a string, got {"message":"x"}',
    ]);
    expect(jobProblems([], "COMPLETED")).toEqual(["expected a JSON object, got []"]);
  });

  it("handlerError reads the worker runtime's JSON error and a plain message alike", () => {
    const python = JSON.stringify({ error_type: "<class 'ValueError'>", error_message: "model not loaded", error_traceback: "Traceback ...", hostname: "h", worker_id: "w" });
    expect(handlerError({ error: python })).toEqual({ message: "model not loaded", type: "<class 'ValueError'>", traceback: "Traceback ..." });
    expect(handlerError({ error: "model not loaded" })).toEqual({ message: "model not loaded" });
    expect(handlerError({ error: '{"other": 1}' })).toEqual({ message: '{"other": 1}' });
    expect(() => handlerError({})).toThrow("the job has no error string");
  });

  it("errorProblems checks only the status on the queue API, and problem+json on REST", () => {
    expect(errorProblems({ status: 404, body: "whatever" }, 404, "queue")).toEqual([]);
    expect(errorProblems({ status: 400, body: {} }, 404, "queue")).toEqual(["status: expected 404, got 400"]);
    expect(errorProblems({ status: 400, body: { title: "Bad Request", status: 400, detail: "d", errors: ["$.x: y"] } }, 400, "rest")).toEqual([]);
    expect(errorProblems({ status: 400, body: { status: 500, errors: [1] } }, 400, "rest")).toEqual([
      "title: expected a string",
      "status: the body's (500) is not the answer's (400)",
      "detail: expected a string",
      "errors: expected an array of strings",
    ]);
  });
});
