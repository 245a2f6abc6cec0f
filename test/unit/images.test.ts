import { describe, expect, it } from "vitest";
import { BUILTIN_IMAGES, imageCommand, imageRuleFor, type ImageRule } from "../../src/domain/images.js";

const rule = (image: string): ImageRule => ({ image, command: ["{python}", "handler.py"], env: {} });

describe("images: which entry an image name takes", () => {
  it("matches `*` against any characters, and a name without a tag against each of its tags", () => {
    const rules = [rule("acme/worker"), rule("runpod/flash*"), rule("x/*:gpu-*")];
    expect(imageRuleFor(rules, "acme/worker")?.image).toBe("acme/worker");
    expect(imageRuleFor(rules, "acme/worker:1.2")?.image).toBe("acme/worker");
    expect(imageRuleFor(rules, "acme/worker-two:1.2")).toBeUndefined();
    expect(imageRuleFor(rules, "runpod/flash-cpu:py3.12-latest")?.image).toBe("runpod/flash*");
    expect(imageRuleFor(rules, "x/y:gpu-1")?.image).toBe("x/*:gpu-*");
    expect(imageRuleFor(rules, "x/y:cpu-1")).toBeUndefined();
    expect(imageRuleFor(rules, undefined)).toBeUndefined();
  });

  it("takes the first match, so the config's entries come before minipod's own", () => {
    const mine = { ...rule("runpod/flash:*"), command: ["my-worker"] };
    expect(imageRuleFor([mine, ...BUILTIN_IMAGES], "runpod/flash:py3.12-latest")).toBe(mine);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/flash:py3.12-latest")?.builtin).toBe(true);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/flash-cpu:py3.11-1.2")?.builtin).toBe(true);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/queue:py3.11-latest")?.command).toEqual(["{python}", "-m", "minipod.runtimes.queue"]);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/queue-gpu:py3.11-latest")?.command).toEqual(["{python}", "-m", "minipod.runtimes.queue"]);
    // Load-balanced images: minipod's HTTP runtimes; the task images are not served.
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/flash-lb:py3.12-latest")?.command).toEqual(["{python}", "-m", "minipod.runtimes.flash_lb"]);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/flash-lb-cpu:py3.12-latest")?.command).toEqual(["{python}", "-m", "minipod.runtimes.flash_lb"]);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/api:py3.11-latest")?.command).toEqual(["{python}", "-m", "minipod.runtimes.api"]);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/api-gpu:py3.11-latest")?.command).toEqual(["{python}", "-m", "minipod.runtimes.api"]);
    expect(imageRuleFor(BUILTIN_IMAGES, "runpod/task:py3.11-latest")).toBeUndefined();
  });

  it("puts the interpreter in for {python}: the entry's, else the default", () => {
    expect(imageCommand(rule("a"), "/venv/bin/python")).toEqual(["/venv/bin/python", "handler.py"]);
    expect(imageCommand({ ...rule("a"), python: "python3.12" }, "/venv/bin/python")).toEqual(["python3.12", "handler.py"]);
  });
});
