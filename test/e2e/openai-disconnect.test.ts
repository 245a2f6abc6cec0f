import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

let emu: Emulator;
afterEach(() => emu?.close());

/** Turns of the event loop until `check` holds: the server hears of a closed socket in wall time, not virtual. */
async function until(check: () => boolean, turns = 5000): Promise<void> {
  for (let i = 0; i < turns && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

const lastEvent = (id: string) => emu.events(id).at(-1);
const running = async (): Promise<string[]> =>
  ((await (await fetch(`${emu.url}/v2/llm/requests?status=IN_PROGRESS`, { headers: { authorization: "k" } })).json()) as { requests: Array<{ id: string }> }).requests.map((r) => r.id);

describe("an OpenAI client that goes away, over a real socket", () => {
  it("cancels the job of a stream it stops reading, and of a plain request it aborts", async () => {
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "llm", handler: "openai", workersMin: 1, workersMax: 1, openai: { tokenDelayMs: 1000, replyTokens: 50 } }] } });
    const client = new OpenAI({ apiKey: "k", baseURL: `${emu.url}/v2/llm/openai/v1`, maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "go on" }];

    const stream = await client.chat.completions.create({ model: "minipod-llm", messages, stream: true });
    const chunks = stream[Symbol.asyncIterator]();
    expect((await chunks.next()).value.choices[0].delta).toEqual({ role: "assistant", content: "" });
    await emu.clock.advance(1000);
    expect((await chunks.next()).value.choices[0].delta.content).toEqual(expect.any(String));
    const [streamJob] = await running();
    stream.controller.abort();
    await until(() => lastEvent(streamJob!)?.to === "CANCELLED");
    expect(lastEvent(streamJob!)?.cause).toBe("cancelled: the client of the OpenAI request went away");

    const controller = new AbortController();
    const plain = client.chat.completions.create({ model: "minipod-llm", messages }, { signal: controller.signal }).catch((e: unknown) => e);
    let plainJob: string | undefined;
    for (let i = 0; i < 100 && !plainJob; i++) {
      await emu.clock.advance(1000);
      plainJob = (await running())[0];
    }
    expect(plainJob).toBeDefined();
    controller.abort();
    expect(await plain).toBeInstanceOf(OpenAI.APIUserAbortError);
    await until(() => lastEvent(plainJob!)?.to === "CANCELLED");
    // The worker is free again: the next request is answered.
    const next = client.chat.completions.create({ model: "minipod-llm", messages, max_tokens: 1 });
    await emu.clock.advance(1000);
    expect((await next).choices[0]!.finish_reason).toBe("length");
  });
});
