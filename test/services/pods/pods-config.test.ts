import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/compose/config.js";

const messageOf = (raw: unknown): string => {
  try {
    parseConfig(raw, "cfg");
  } catch (e) {
    return (e as Error).message;
  }
  return "";
};

describe("config: pods, containerRegistryAuths, pricing", () => {
  it("defaults to none and an empty price override", () => {
    const c = parseConfig({});
    expect(c.pods).toEqual([]);
    expect(c.containerRegistryAuths).toEqual([]);
    expect(c.pricing).toEqual({});
  });

  it("names every bad field, and never the password", () => {
    const message = messageOf({
      containerRegistryAuths: [{ name: "b", username: "u" }],
      pods: [{ name: "p" }, { name: "q", imageName: "i", gpuTypeIds: ["NVIDIA Voodoo"], desiredStatus: "PAUSED" }],
      pricing: { gpuPerHour: { "NVIDIA A40": -1 }, volumePerGbMonth: "cheap" },
    });
    expect(message).toMatch(/containerRegistryAuths\[0\]\.password: /);
    expect(message).toContain("pods[0].imageName: expected imageName or templateId");
    expect(message).toMatch(/pods\[1\]\.gpuTypeIds\[0\]: /);
    expect(message).toMatch(/pods\[1\]\.desiredStatus: /);
    expect(message).toMatch(/pricing\.gpuPerHour\.NVIDIA A40: /);
    expect(message).toMatch(/pricing\.volumePerGbMonth: /);
  });

  it("checks names, ids and references across the config, and never shows a password", () => {
    const message = messageOf({
      containerRegistryAuths: [
        { name: "a", username: "u", password: "very-secret-1" },
        { name: "a", username: "u", password: "very-secret-2" },
      ],
      templates: [{ id: "t", name: "t" }],
      networkVolumes: [{ id: "v", name: "v", size: 10, dataCenter: "EU-RO-1" }],
      pods: [
        { name: "q", imageName: "i", templateId: "nope", networkVolumeId: "nope", containerRegistryAuthId: "nope" },
        { name: "s", imageName: "i" },
        { name: "s", imageName: "i" },
      ],
    });
    expect(message).toContain('containerRegistryAuths[1].name: duplicate container registry auth name "a"; names are unique');
    expect(message).toContain('pods[0].templateId: unknown template "nope"');
    expect(message).toContain('pods[0].networkVolumeId: unknown network volume "nope"');
    expect(message).toContain('pods[0].containerRegistryAuthId: unknown container registry auth "nope"');
    expect(message).toContain('pods[2].name: pod "s" is declared twice; give each an id');
    expect(message).not.toContain("very-secret");
  });

  it("accepts references to what the config declares", () => {
    const c = parseConfig({
      containerRegistryAuths: [{ id: "creds", name: "creds", username: "u", password: "p" }],
      templates: [{ id: "t", name: "t" }],
      networkVolumes: [{ id: "v", name: "v", size: 10, dataCenter: "EU-RO-1" }],
      pods: [{ name: "r", templateId: "t", networkVolumeId: "v", containerRegistryAuthId: "creds", desiredStatus: "EXITED" }],
      pricing: { gpuPerHour: { "My GPU": 2 }, cpuPerVcpuHour: 0 },
    });
    expect(c.pods[0]).toMatchObject({ name: "r", desiredStatus: "EXITED" });
    expect(c.pricing.gpuPerHour).toEqual({ "My GPU": 2 });
  });
});
