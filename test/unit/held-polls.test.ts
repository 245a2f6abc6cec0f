import { describe, expect, it } from "vitest";
import { HeldPolls } from "../../src/domain/held-polls.js";
import { FakeWall } from "../support/fake-wall.js";

const setup = () => {
  const wall = new FakeWall();
  return { wall, polls: new HeldPolls<string, string, string[]>(wall, () => []) };
};

describe("held polls", () => {
  it("answers polls in the order they came, as long as there is something to give", async () => {
    const { polls } = setup();
    const a = polls.wait("ep", "a", 20_000);
    const b = polls.wait("ep", "b", 20_000);
    const c = polls.wait("ep", "c", 20_000);
    let left = 2;
    polls.offer("ep", (who) => (left-- > 0 ? [`job-for-${who}`] : undefined));
    expect(await a).toEqual(["job-for-a"]);
    expect(await b).toEqual(["job-for-b"]);
    expect(polls.waiting("ep")).toBe(true);
    polls.release("ep");
    expect(await c).toEqual([]);
    expect(polls.waiting("ep")).toBe(false);
  });

  it("ends a hold empty when its time is up, in wall time", async () => {
    const { wall, polls } = setup();
    let answer: string[] | undefined;
    void polls.wait("ep", "a", 1000).then((v) => (answer = v));
    wall.advance(999);
    await Promise.resolve();
    expect(answer).toBeUndefined();
    wall.advance(1);
    await Promise.resolve();
    expect(answer).toEqual([]);
  });

  it("drops a poll whose client left: nothing is handed to it", async () => {
    const { polls } = setup();
    const left = new AbortController();
    const gone = polls.wait("ep", "gone", 20_000, left.signal);
    const stays = polls.wait("ep", "stays", 20_000);
    left.abort();
    expect(await gone).toEqual([]);
    const given: string[] = [];
    polls.offer("ep", (who) => (given.push(who), [who]));
    expect(given).toEqual(["stays"]);
    expect(await stays).toEqual(["stays"]);
  });

  it("releases only the polls picked", async () => {
    const { polls } = setup();
    const a = polls.wait("ep", "a", 20_000);
    const b = polls.wait("ep", "b", 20_000);
    polls.release("ep", (who) => who === "b");
    expect(await b).toEqual([]);
    polls.offer("ep", (who) => [who]);
    expect(await a).toEqual(["a"]);
  });
});
