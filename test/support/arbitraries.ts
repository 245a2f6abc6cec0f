import fc from "fast-check";

// What the fuzz tests send: methods, path segments, queries, bodies and headers.

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "QUERY", "PURGE", "get", "Post"];

/** Strings a path parameter or segment might hold, from the plausible to the hostile. */
export const segment = fc.oneof(
  fc.constantFrom("echo", "work", "nope", "", ".", "..", "%", "%00", "%2F", "%E0%A4%A", "a%20b", "-u1", "sync-x", "0", "-1", "1e309", "null", "undefined", "__proto__", "constructor"),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: "grapheme", maxLength: 12 }).map(encodeURIComponent),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/),
  fc.constant("x".repeat(5000)),
);

export const query = fc.oneof(
  fc.constant(""),
  fc.constantFrom("?wait=1000", "?wait=-5", "?wait=abc", "?wait=1e400", "?ttl=10000", "?ttl=0", "?ttl=9007199254740993", "?limit=-1&offset=x", "?jobId=", "?isStream=maybe", "?a=1&a=2", "?%zz=1"),
  fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })), { maxLength: 3 }).map((kv) => "?" + kv.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")),
);

/** Nests a value `depth` times in arrays or objects. */
const nested = (depth: number, inObject: boolean) => {
  let text = "1";
  for (let i = 0; i < depth; i++) text = inObject ? `{"a":${text}}` : `[${text}]`;
  return text;
};

const json = fc.jsonValue({ maxDepth: 4 });
export const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: json.map((input) => JSON.stringify({ input })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ input: json, policy: fc.anything(), s3Config: fc.anything(), webhook: fc.oneof(fc.string(), fc.webUrl(), fc.integer()) }, { requiredKeys: [] })
      .map((v) => JSON.stringify(v)),
  },
  { weight: 3, arbitrary: json.map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "{",
      "{not json",
      '{"input":',
      "null",
      "[]",
      '"string"',
      "1e309",
      '{"input":{"n":1e400}}',
      '{"input":{"n":-0}}',
      '{"input":{"n":123456789012345678901234567890}}',
      '{"input":{},"policy":{"ttl":1e999,"executionTimeout":-1e308}}',
      '{"input":{},"policy":{"ttl":10000.5}}',
      '{"input":{"s":"\\ud800"}}',
      '{"input":{"__proto__":{"polluted":true}}}',
      '{"input":{},"__proto__":{"x":1}}',
      '{"input":{"a":1},"input":[1]}',
      '{"ms":1e15}',
      '{"ms":-1}',
      '{"name":"n","size":1e10}',
      "\uFEFF{}",
      "\u0000",
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(20, 500, 5000).chain((d) => fc.boolean().map((o) => `{"input":{"deep":${nested(d, o)}}}`)) },
);

export const contentType = fc.constantFrom(
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/problem+json",
  "application/json; charset=utf-16",
  "garbage/;;;",
);
export const authorization = fc.oneof(
  { weight: 6, arbitrary: fc.constant("Bearer test-key") },
  { weight: 1, arbitrary: fc.constantFrom("test-key", "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "bearer test-key") },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)) },
);
export const extraHeaders = fc.dictionary(
  fc.constantFrom("accept", "x-request-id", "content-length", "transfer-encoding", "x-minipod-control-key", "if-none-match", "cookie"),
  fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  { maxKeys: 2 },
);
