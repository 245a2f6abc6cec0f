import { spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { defaultTlsDir, tlsIdentity } from "../../src/compose/tls.js";

// minipod's local authority (src/compose/tls.ts): made once per folder, kept, made again when it
// cannot serve; the same one for minipods that start at once.

const TLS = fileURLToPath(new URL("../../src/compose/tls.ts", import.meta.url));
const dirs: string[] = [];
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), "minipod-ca-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const everything = () => true;

describe("minipod's local authority", () => {
  it("is made once and kept: a second start reads it, with a new leaf key", () => {
    const dir = fresh();
    const first = tlsIdentity(dir, ["localhost"], everything);
    const cert = readFileSync(first.caFile, "utf8");
    const second = tlsIdentity(dir, ["localhost"], everything);
    expect(readFileSync(second.caFile, "utf8")).toBe(cert);
    expect(second.key).not.toBe(first.key);
    // The leaf of each start is signed by it, for the names given.
    const leaf = new X509Certificate(second.cert.split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n");
    expect(leaf.verify(new X509Certificate(cert).publicKey)).toBe(true);
    expect(leaf.subjectAltName).toBe("DNS:localhost");
    expect(statSync(join(dir, "ca", "key.pem")).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(["ca"]);
  });

  it("is made again when its files are damaged", () => {
    const dir = fresh();
    const before = readFileSync(tlsIdentity(dir, [], everything).caFile, "utf8");
    writeFileSync(join(dir, "ca", "key.pem"), "not a key");
    const after = tlsIdentity(dir, [], everything);
    expect(readFileSync(after.caFile, "utf8")).not.toBe(before);
    expect(new X509Certificate(readFileSync(after.caFile, "utf8")).ca).toBe(true);
  });

  it("is the same for four minipods making it at once", async () => {
    const dir = fresh();
    const script = `import { tlsIdentity } from ${JSON.stringify(TLS)}; import { readFileSync } from "node:fs"; process.stdout.write(readFileSync(tlsIdentity(process.argv[1], [], () => true).caFile, "utf8"));`;
    const made = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, dir], { stdio: ["ignore", "pipe", "pipe"] });
            let out = "";
            let err = "";
            child.stdout.on("data", (d: Buffer) => (out += d.toString()));
            child.stderr.on("data", (d: Buffer) => (err += d.toString()));
            child.once("close", (code) => (code === 0 ? resolve(out) : reject(new Error(err))));
          }),
      ),
    );
    expect(new Set(made).size).toBe(1);
    expect(made[0]).toBe(readFileSync(join(dir, "ca", "cert.pem"), "utf8"));
    expect(readdirSync(dir).sort()).toEqual(["ca"]);
  }, 60_000);

  it("issues a leaf for a name asked for only when minipod answers it", () => {
    const identity = tlsIdentity(fresh(), ["localhost"], (name) => name.endsWith(".localhost"));
    expect(identity.contextFor("localhost")).toBe(identity.context);
    expect(identity.contextFor("api.localhost")).toBeDefined();
    expect(identity.contextFor("api.localhost")).toBe(identity.contextFor("API.localhost"));
    expect(identity.contextFor("evil.example")).toBeUndefined();
    expect(identity.contextFor("a b.localhost")).toBeUndefined();
  });

  it("is kept in MINIPOD_TLS_DIR, else under XDG_DATA_HOME, else ~/.local/share", () => {
    expect(defaultTlsDir({ MINIPOD_TLS_DIR: "/x/tls" })).toBe("/x/tls");
    expect(defaultTlsDir({ XDG_DATA_HOME: "/data" })).toBe(join("/data", "minipod", "tls"));
    expect(defaultTlsDir({})).toMatch(/\.local\/share\/minipod\/tls$/);
  });
});
