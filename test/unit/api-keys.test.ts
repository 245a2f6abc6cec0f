import { describe, expect, it } from "vitest";
import { ApiKeys, keyFromHeader } from "../../src/http/auth.js";

describe("API keys: the last Authorization header kept", () => {
  it("answers as keyFromHeader does, whatever the order of headers and surfaces", () => {
    const keys = new ApiKeys({ keys: [] });
    const asks: Array<[string | undefined, boolean]> = [
      ["Bearer k1", true],
      ["Bearer k1", true],
      ["k1", true],
      ["k1", false], // the same header on a REST route: a bare key is refused there
      ["k1", true],
      ["Bearer k2", false],
      [undefined, false],
      ["Bearer", true],
      ["Bearer k2", true],
    ];
    for (const [header, bare] of asks) expect(keys.parse(header, bare)).toEqual(keyFromHeader(header, bare));
  });
});
