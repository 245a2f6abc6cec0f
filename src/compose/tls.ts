import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { createSecureContext, type SecureContext } from "node:tls";
import { RecentMap } from "../domain/recent-map.js";
import { certificate } from "./x509.js";

/**
 * minipod's local certificate authority, and the server certificates it issues for the names
 * minipod answers on its port's TLS side (see tls-port.ts). The authority is made once per user
 * (an EC P-256 key, kept with mode 0600 in a folder of mode 0700) and trusted by whoever chooses
 * to (`SSL_CERT_FILE`, the Python fixture); a leaf key is made at each start, and a leaf for each
 * name a client asks for (SNI) as it first asks, signed by the authority. Nothing is downloaded.
 */

const DAY = 86_400_000;
/** The authority lasts ten years; made again when less than a day of it is left. */
const AUTHORITY_DAYS = 3650;
/** A leaf lasts 397 days, the longest a browser accepts. */
const LEAF_DAYS = 397;
/** The authority's name, as clients show it. */
const AUTHORITY_NAME = "minipod local authority";
/** How long a minipod waits for another making the authority before it takes the lock over. */
const LOCK_WAIT_MS = 5_000;
/** Leaves kept per name a client asked for (each is a few hundred bytes). */
const LEAVES_KEPT = 256;

/** Where the authority is kept: MINIPOD_TLS_DIR, else $XDG_DATA_HOME/minipod/tls, else ~/.local/share/minipod/tls. */
export function defaultTlsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MINIPOD_TLS_DIR) return env.MINIPOD_TLS_DIR;
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "minipod", "tls");
}

interface Authority {
  /** The authority's certificate file (PEM), what a client trusts. */
  certFile: string;
  cert: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/**
 * The authority kept in `dir` (`ca/cert.pem`, `ca/key.pem`), made there when absent, expiring or
 * unreadable: by one minipod at a time (a lock folder beside it), in a fresh folder renamed into
 * place, so that two starting at once end with the same one and a reader never sees half of it.
 */
function loadAuthority(dir: string, now: number): Authority {
  const folder = join(dir, "ca");
  const certFile = join(folder, "cert.pem");
  const read = (): Authority | undefined => {
    try {
      const cert = readFileSync(certFile, "utf8");
      const privateKey = createPrivateKey(readFileSync(join(folder, "key.pem"), "utf8"));
      const x509 = new X509Certificate(cert);
      const publicKey = createPublicKey(privateKey);
      if (!x509.ca || !x509.checkPrivateKey(privateKey) || Date.parse(x509.validTo) - now < DAY) return undefined;
      return { certFile, cert, privateKey, publicKey };
    } catch {
      return undefined;
    }
  };
  const kept = read();
  if (kept) return kept;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // One minipod makes it at a time (two started at once, as test files are): the others wait for its folder.
  const lock = join(dir, "ca.lock");
  for (const until = Date.now() + LOCK_WAIT_MS; ; ) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const theirs = read();
      if (theirs) return theirs;
      // A lock left by a process that died while making one: taken over.
      if (Date.now() > until) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    const made = read();
    if (made) return made;
    const fresh = join(dir, `ca.${process.pid}.${Math.random().toString(36).slice(2)}`);
    mkdirSync(fresh, { mode: 0o700 });
    const keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const cert = certificate({
      subject: AUTHORITY_NAME,
      publicKey: keys.publicKey,
      issuer: { name: AUTHORITY_NAME, ...keys },
      notBefore: now - DAY,
      notAfter: now + AUTHORITY_DAYS * DAY,
      kind: { authority: true },
    });
    writeFileSync(join(fresh, "key.pem"), keys.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    chmodSync(join(fresh, "key.pem"), 0o600);
    writeFileSync(join(fresh, "cert.pem"), cert, { mode: 0o644 });
    // One that is there but unusable (expiring, damaged) goes; the new one takes its place whole.
    rmSync(folder, { recursive: true, force: true });
    renameSync(fresh, folder);
    return { certFile, ...keys, cert };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface TlsIdentity {
  /** The authority's certificate file, for clients to trust (`SSL_CERT_FILE`, NODE_EXTRA_CA_CERTS). */
  readonly caFile: string;
  /** The key and certificate chain (PEM) of the names known at start (`localhost`, its loopback addresses, the bound one, allowedHosts). */
  readonly key: string;
  readonly cert: string;
  readonly context: SecureContext;
  /** The context for a name a client asks for (SNI): a leaf for exactly that name when minipod answers it, else undefined. */
  contextFor(servername: string): SecureContext | undefined;
}

/**
 * A server identity for minipod's port: the authority from `dir`, a leaf key of this start, and
 * leaves for `names` and, on demand, for any name `answers` says minipod answers (`{id}.localhost`
 * of a load-balancing endpoint: OpenSSL takes no wildcard directly under a one-label name, so each
 * is named exactly).
 */
export function tlsIdentity(dir: string, names: readonly string[], answers: (servername: string) => boolean, now = Date.now()): TlsIdentity {
  const authority = loadAuthority(dir, now);
  const leafKeys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const key = leafKeys.privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const chain = (subject: string, altNames: readonly string[]): string =>
    certificate({
      subject,
      publicKey: leafKeys.publicKey,
      issuer: { name: AUTHORITY_NAME, privateKey: authority.privateKey, publicKey: authority.publicKey },
      notBefore: now - DAY,
      notAfter: now + LEAF_DAYS * DAY,
      kind: { authority: false, names: altNames },
    }) + authority.cert;
  const issue = (subject: string, altNames: readonly string[]): SecureContext => createSecureContext({ key, cert: chain(subject, altNames) });
  const known = [...new Set(names.map((n) => n.toLowerCase().replace(/^\[|\]$/g, "")).filter((n) => n !== "" && n !== "0.0.0.0" && n !== "::"))];
  const cert = chain("localhost", known);
  const context = createSecureContext({ key, cert });
  const leaves = new RecentMap<string, SecureContext>(LEAVES_KEPT);
  return {
    caFile: authority.certFile,
    key,
    cert,
    context,
    contextFor(servername) {
      const name = servername.toLowerCase();
      if (known.includes(name)) return context;
      // A name of a DNS label's characters only, as SNI carries (never an address: RFC 6066 §3).
      if (isIP(name) || !/^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/.test(name) || name.length > 253 || !answers(name)) return undefined;
      let leaf = leaves.get(name);
      if (!leaf) leaves.set(name, (leaf = issue(name, [name])));
      return leaf;
    },
  };
}
