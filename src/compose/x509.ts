import { createHash, randomBytes, sign, type KeyObject } from "node:crypto";
import { isIP } from "node:net";

/**
 * The few DER shapes an X.509 v3 certificate needs (ITU-T X.690), and the certificates minipod
 * signs with them: its local authority and the leaves it issues for the names it answers. ECDSA
 * P-256 with SHA-256 throughout; node:crypto makes the keys and the signatures, this file only
 * lays out the bytes.
 */

/** A DER element: its tag, its length, its content. */
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const octets = (content: Buffer): Buffer => tlv(0x04, content);
/** A BIT STRING with no unused bits. */
const bits = (content: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, "utf8"));
const TRUE = tlv(0x01, Buffer.from([0xff]));
/** `[n] EXPLICIT`: a constructed context tag around an element. */
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);

/** A non-negative INTEGER from its big-endian bytes (a 0 byte first when the top bit is set). */
function integer(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0 && (bytes[i + 1]! & 0x80) === 0) i++;
  const trimmed = bytes.subarray(i);
  return tlv(0x02, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** An OBJECT IDENTIFIER from its dotted form. */
function oid(dotted: string): Buffer {
  const arcs = dotted.split(".").map(Number);
  const out = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const base128: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5), to the second, in UTC. */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2026-11-28T02:44:40.123Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, "");
  return Number(iso.slice(0, 4)) < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

const ECDSA_WITH_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));
const name = (commonName: string): Buffer => sequence(set(sequence(oid("2.5.4.3"), utf8(commonName))));
const extension = (id: string, critical: boolean, value: Buffer): Buffer => sequence(oid(id), ...(critical ? [TRUE] : []), octets(value));

/** The key identifier of a public key: SHA-1 of its subjectPublicKey bits (RFC 5280 §4.2.1.2, method 1). */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: "spki", format: "der" });
  // P-256's SubjectPublicKeyInfo ends with the 65 bytes of the uncompressed point.
  return createHash("sha1").update(spki.subarray(spki.length - 65)).digest();
}

/** A DNS name or an IP address of a certificate's subjectAltName. */
function altName(entry: string): Buffer {
  const family = isIP(entry);
  if (family === 4) return tlv(0x87, Buffer.from(entry.split(".").map(Number)));
  if (family === 6) return tlv(0x87, ipv6Bytes(entry));
  return tlv(0x82, Buffer.from(entry, "ascii"));
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.includes("::") ? address.split("::") : [address, undefined];
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  const groups = tail === undefined ? part(head) : [...part(head), ...Array(8 - part(head).length - part(tail).length).fill("0"), ...part(tail)];
  const out = Buffer.alloc(16);
  groups.forEach((g: string, i: number) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

export interface CertificateRequest {
  /** The subject's common name. */
  subject: string;
  /** The subject's public key. */
  publicKey: KeyObject;
  /** Who signs: the issuer's name and private key (the subject's own, for a self-signed authority). */
  issuer: { name: string; privateKey: KeyObject; publicKey: KeyObject };
  /** Valid from, to (epoch ms). */
  notBefore: number;
  notAfter: number;
  /** An authority (may sign certificates) or a server's leaf for these names and addresses. */
  kind: { authority: true } | { authority: false; names: readonly string[] };
}

/** A signed X.509 v3 certificate, in PEM. */
export function certificate(req: CertificateRequest): string {
  const extensions = [extension("2.5.29.14", false, octets(keyIdentifier(req.publicKey)))];
  if (req.kind.authority) {
    // basicConstraints cA, keyUsage keyCertSign and cRLSign (bits 5 and 6).
    extensions.push(extension("2.5.29.19", true, sequence(TRUE)), extension("2.5.29.15", true, tlv(0x03, Buffer.from([1, 0x06]))));
  } else {
    // basicConstraints (not an authority), keyUsage digitalSignature (bit 0), serverAuth, the names, the issuer's key.
    extensions.push(
      extension("2.5.29.19", true, sequence()),
      extension("2.5.29.15", true, tlv(0x03, Buffer.from([7, 0x80]))),
      extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.1"))),
      extension("2.5.29.17", false, sequence(...req.kind.names.map(altName))),
      extension("2.5.29.35", false, sequence(tlv(0x80, keyIdentifier(req.issuer.publicKey)))),
    );
  }
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_WITH_SHA256,
    name(req.issuer.name),
    sequence(time(req.notBefore), time(req.notAfter)),
    name(req.subject),
    req.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign("sha256", tbs, { key: req.issuer.privateKey, dsaEncoding: "der" });
  const der = sequence(tbs, ECDSA_WITH_SHA256, bits(signature));
  const base64 = der.toString("base64").replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN CERTIFICATE-----\n${base64}-----END CERTIFICATE-----\n`;
}
