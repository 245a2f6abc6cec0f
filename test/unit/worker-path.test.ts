import { describe, expect, it } from "vitest";
import { resolvedLbTarget, withoutDotSegments } from "../../src/http/load-balancer/worker-path.js";

describe("withoutDotSegments", () => {
  it("resolves as RFC 3986's remove_dot_segments, never above /", () => {
    expect(withoutDotSegments("/a/b/c/./../../g")).toBe("/a/g");
    expect(withoutDotSegments("/a/b/..")).toBe("/a/");
    expect(withoutDotSegments("/../../../x")).toBe("/x");
    expect(withoutDotSegments("/..")).toBe("/");
    expect(withoutDotSegments("/.")).toBe("/");
    expect(withoutDotSegments("/")).toBe("/");
    expect(withoutDotSegments("/a//../b")).toBe("/a/b");
  });

  it("reads %2e as a dot, and leaves names that only start with dots", () => {
    expect(withoutDotSegments("/a/%2E%2e/b/%2e/c")).toBe("/b/c");
    expect(withoutDotSegments("/.well-known/..x/...")).toBe("/.well-known/..x/...");
    expect(withoutDotSegments("/..%2f/x")).toBe("/..%2f/x");
  });

  it("makes a leading // one slash and keeps empty segments inside", () => {
    expect(withoutDotSegments("//evil.example/x")).toBe("/evil.example/x");
    expect(withoutDotSegments("/a//b")).toBe("/a//b");
  });

  it("counts a backslash in the leading run as a slash (WHATWG's parser reads /\\host as another host), and leaves one inside", () => {
    expect(withoutDotSegments("/\\evil.example/x")).toBe("/evil.example/x");
    expect(withoutDotSegments("/\\/\\/evil.example/x")).toBe("/evil.example/x");
    expect(withoutDotSegments("/./\\evil.example/x")).toBe("/evil.example/x");
    expect(withoutDotSegments("/a/\\b")).toBe("/a/\\b");
  });
});

describe("resolvedLbTarget", () => {
  it("resolves the path after the endpoint's id, leaving the id and the query", () => {
    expect(resolvedLbTarget("/lb/api/../other/x?to=../y")).toBe("/lb/api/other/x?to=../y");
    expect(resolvedLbTarget("/lb/api/x")).toBe("/lb/api/x");
    expect(resolvedLbTarget("/lb/api")).toBe("/lb/api");
  });

  it("percent-encodes a backslash left in the path (past the leading run), the id's too, and leaves the query's", () => {
    expect(resolvedLbTarget("/lb/api/x\\y?q=\\")).toBe("/lb/api/x%5Cy?q=\\");
    expect(resolvedLbTarget("/lb/api/\\evil.example/a\\b")).toBe("/lb/api/evil.example/a%5Cb");
    expect(resolvedLbTarget("/lb/api/x\\..\\..\\y")).toBe("/lb/api/x%5C..%5C..%5Cy");
    expect(resolvedLbTarget("/lb/a\\pi/x")).toBe("/lb/a%5Cpi/x");
    expect(resolvedLbTarget("/lb/a\\pi")).toBe("/lb/a%5Cpi");
  });

  it("leaves a target that names no endpoint (the app resolves it as any path)", () => {
    expect(resolvedLbTarget("/lb/../v2/x")).toBe("/lb/../v2/x");
    expect(resolvedLbTarget("/lb/%2e%2e/x")).toBe("/lb/%2e%2e/x");
    expect(resolvedLbTarget("/v2/echo/../run")).toBe("/v2/echo/../run");
  });
});
