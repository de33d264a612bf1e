// Seeded raw HTTP requests for fuzzing the gateway's servers (test/gateway/http-fuzz.test.ts):
// request lines (methods, targets that are no URL, odd versions), headers (lengths that lie,
// duplicates, folds, huge values, keys right and wrong), bodies (the route's JSON, mutated,
// truncated, garbage, deep nesting, invalid UTF-8) framed by Content-Length, chunked encoding
// (good and broken) or nothing, sometimes two requests pipelined, sometimes cut short.
import { mulberry32, randomInt, type Random } from "../../src/contracts/random.js";

/** What the fuzzer knows of the server under test: routes to aim at, bodies they take, headers that pass. */
export interface FuzzTarget {
  readonly routes: readonly { readonly method: string; readonly path: string; readonly body: () => unknown }[];
  readonly goodHeaders: readonly string[];
}

export interface FuzzCase {
  readonly bytes: Buffer;
  /** The bytes stop inside a request: the server may close without answering. */
  readonly cut: boolean;
  /** What the case is, for the failure message. */
  readonly label: string;
  /** The (first) request is a HEAD. */
  readonly head: boolean;
}

const METHODS = [
  "GET",
  "POST",
  "PUT",
  "DELETE",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "TRACE",
  "CONNECT",
  "get",
  "POST POST",
  "G\u0000ET",
  "",
  "PROPFIND",
  "X".repeat(300),
];
const VERSIONS = [
  "HTTP/1.1",
  "HTTP/1.1",
  "HTTP/1.1",
  "HTTP/1.0",
  "HTTP/2.0",
  "HTTP/9.9",
  "HTTP/1.1x",
  "",
  "FOO/1.1",
  "http/1.1",
];
const BAD_TARGETS = [
  "http://[",
  "http://[::1",
  "http://x:99999/v1/models",
  "http://user@/",
  "https://[::1]:0/health",
  "//[/v1",
  "*",
  "",
  "/%",
  "/%zz/%",
  "/s/%00/v1/models",
  "/s//v1/models",
  "/s/zz/v1/models",
  "/..%2f..%2fetc/passwd",
  "/v1/completions?%=%&mode=%ZZ",
  "/pause?mode=abort&mode=keep",
  "/pause?mode=%F0%9F%98%80",
  "/\u00ff\u00fe",
  "/a b",
  `/${"a".repeat(20_000)}`,
  "/\t/",
  "/#frag",
  "/health/",
  "/v1/models/%",
];
const NOISE_HEADERS = [
  "Content-Type: application/json",
  "Content-Type: text/plain",
  "Accept: */*",
  "Expect: 100-continue",
  "Connection: keep-alive",
  "Connection: close",
  "Connection: upgrade\r\nUpgrade: websocket",
  "Authorization: Bearer",
  "Authorization: Bearer \u00ff\u00fe",
  "Authorization: Basic Zm9vOmJhcg==",
  "Authorization: Bearer wrong",
  "X-Folded: a\r\n b",
  "NoColonHere",
  "Bad Name: x",
  ": empty name",
  `X-Huge: ${"h".repeat(20_000)}`,
  "Host: second",
  "Content-Length: -1",
  "Content-Length: 1e3",
  "Content-Length: 99999999999999999999",
  "Transfer-Encoding: gzip",
  "Transfer-Encoding: chunked, chunked",
  "Content-Encoding: gzip",
];

const pick = <T>(random: Random, items: readonly T[]): T => items[randomInt(random, items.length)] as T;
const chance = (random: Random, p: number): boolean => random() < p;

/** `text` with a few bytes inserted, deleted or replaced. */
function mutated(random: Random, text: Buffer): Buffer {
  const bytes = [...text];
  const edits = 1 + randomInt(random, 4);
  for (let e = 0; e < edits; e++) {
    const at = randomInt(random, bytes.length + 1);
    const op = randomInt(random, 3);
    const byte = pick(random, [
      0x00,
      0x22,
      0x5b,
      0x5d,
      0x7b,
      0x7d,
      0x2c,
      0x3a,
      0x5c,
      0xff,
      0xc3,
      0x0a,
      0x30 + randomInt(random, 10),
      randomInt(random, 256),
    ]);
    if (op === 0) bytes.splice(at, 0, byte);
    else if (op === 1) bytes.splice(at, 1);
    else bytes[at] = byte;
  }
  return Buffer.from(bytes);
}

/** A body: the route's JSON, or a mutation of it, or something that is not JSON at all. */
function bodyOf(random: Random, good: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(good));
  switch (randomInt(random, 10)) {
    case 0:
    case 1:
    case 2:
      return json;
    case 3:
    case 4:
      return mutated(random, json);
    case 5:
      return json.subarray(0, randomInt(random, json.length));
    case 6:
      return Buffer.from(`${"[".repeat(20_000)}${"]".repeat(20_000)}`);
    case 7:
      return Buffer.from(Array.from({ length: randomInt(random, 300) }, () => randomInt(random, 256)));
    case 8:
      return Buffer.from(
        JSON.stringify({
          ...(good as object),
          [pick(random, ["__proto__", "constructor", "max_tokens", "prompt", "messages", "input_ids"])]: pick(random, [
            null,
            -1,
            1e308,
            "x",
            [],
            {},
            [[-1]],
            2 ** 31,
            1e9,
          ]),
        }),
      );
    default:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json, Buffer.from([0xc3, 0x28])]);
  }
}

/** The body framed as the case says: Content-Length (right or lying), chunked (good or broken), or nothing. */
function framed(random: Random, body: Buffer): { headers: string[]; payload: Buffer; complete: boolean } {
  switch (randomInt(random, 8)) {
    case 0:
    case 1:
    case 2:
      return { headers: [`Content-Length: ${body.length}`], payload: body, complete: true };
    case 3: {
      const claimed = Math.max(0, body.length + pick(random, [-5, -1, 1, 7, 1000]));
      return { headers: [`Content-Length: ${claimed}`], payload: body, complete: claimed <= body.length };
    }
    case 4:
    case 5: {
      const chunks: Buffer[] = [];
      for (let at = 0; at < body.length;) {
        const size = 1 + randomInt(random, 64);
        const part = body.subarray(at, at + size);
        chunks.push(
          Buffer.from(`${part.length.toString(16)}${chance(random, 0.1) ? ";ext=1" : ""}\r\n`),
          part,
          Buffer.from("\r\n"),
        );
        at += size;
      }
      chunks.push(Buffer.from("0\r\n\r\n"));
      return { headers: ["Transfer-Encoding: chunked"], payload: Buffer.concat(chunks), complete: true };
    }
    case 6: {
      const broken = pick(random, [
        `zz\r\n${body.toString("latin1")}\r\n0\r\n\r\n`,
        `${(body.length + 10).toString(16)}\r\n${body.toString("latin1")}\r\n0\r\n\r\n`,
        `${body.length.toString(16)}\r\n${body.toString("latin1")}`,
        `-1\r\n\r\n`,
        `${"f".repeat(20)}\r\nx\r\n0\r\n\r\n`,
      ]);
      return {
        headers: ["Transfer-Encoding: chunked", ...(chance(random, 0.3) ? [`Content-Length: ${body.length}`] : [])],
        payload: Buffer.from(broken, "latin1"),
        complete: false,
      };
    }
    default:
      return { headers: [], payload: chance(random, 0.5) ? body : Buffer.alloc(0), complete: true };
  }
}

/** One raw request for `target`, and whether the server can be expected to read it whole. */
function request(
  random: Random,
  target: FuzzTarget,
): { bytes: Buffer; complete: boolean; label: string; head: boolean } {
  const route = pick(random, target.routes);
  // A quarter of the requests are well formed, so that the handlers behind the parser are reached.
  if (chance(random, 0.25)) {
    const body = route.method === "GET" ? Buffer.alloc(0) : Buffer.from(JSON.stringify(route.body()));
    const head = `${route.method} ${route.path} HTTP/1.1\r\n${["Host: 127.0.0.1", ...target.goodHeaders, `Content-Length: ${body.length}`].join("\r\n")}\r\n\r\n`;
    return {
      bytes: Buffer.concat([Buffer.from(head, "latin1"), body]),
      complete: true,
      label: `${route.method} ${route.path} (well formed)`,
      head: route.method === "HEAD",
    };
  }
  const method = chance(random, 0.75) ? route.method : pick(random, METHODS);
  const path = chance(random, 0.7)
    ? route.path
    : chance(random, 0.5)
      ? pick(random, BAD_TARGETS)
      : mutated(random, Buffer.from(route.path)).toString("latin1");
  const version = chance(random, 0.85) ? "HTTP/1.1" : pick(random, VERSIONS);
  const headers = chance(random, 0.9) ? ["Host: 127.0.0.1", ...target.goodHeaders] : [];
  for (let n = randomInt(random, 3); n > 0; n--) headers.push(pick(random, NOISE_HEADERS));
  const { headers: framing, payload, complete } = framed(random, bodyOf(random, route.body()));
  const head = `${method} ${path} ${version}\r\n${[...headers, ...framing].join("\r\n")}\r\n\r\n`;
  return {
    bytes: Buffer.concat([Buffer.from(head, "latin1"), payload]),
    complete,
    head: method === "HEAD",
    label: `${JSON.stringify(method)} ${JSON.stringify(path.slice(0, 60))} ${version} [${[...headers.slice(1), ...framing].map((h) => h.slice(0, 40)).join(" | ")}]`,
  };
}

/** `count` cases from `seed`: one request each, sometimes two pipelined, sometimes cut short. */
export function fuzzCases(seed: number, count: number, target: FuzzTarget): FuzzCase[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const first = request(random, target);
    if (chance(random, 0.1)) {
      const second = request(random, target);
      return {
        bytes: Buffer.concat([first.bytes, second.bytes]),
        cut: !first.complete || !second.complete,
        label: `${first.label} + ${second.label}`,
        head: first.head,
      };
    }
    if (chance(random, 0.1))
      return {
        bytes: first.bytes.subarray(0, randomInt(random, first.bytes.length)),
        cut: true,
        label: `${first.label} (cut)`,
        head: first.head,
      };
    return { bytes: first.bytes, cut: !first.complete, label: first.label, head: first.head };
  });
}

/** A hostile body: the route's JSON with one value replaced, and what was put there. */
export interface HostileBody {
  readonly text: string;
  readonly label: string;
}

/** Every path to a value inside `value` (the root excluded), objects' keys and arrays' indices. */
function valuePaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== "object") return [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...valuePaths(v, [...prefix, k])]);
}

const PLACEHOLDER = "\u0000hostile\u0000";

/** `good` as JSON text with the value at `path` replaced by the raw JSON text `raw` (built as text: a deep value would overflow JSON.stringify). */
function replacedAt(good: unknown, path: readonly (string | number)[], raw: string): string {
  const copy = JSON.parse(JSON.stringify(good)) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = PLACEHOLDER;
  return JSON.stringify(copy).replace(JSON.stringify(PLACEHOLDER), () => raw);
}

/**
 * `count` hostile bodies from `seed` for a route whose good body is `good`: a value at a random
 * path (tool schemas, metadata, messages, any field) replaced by an array or object nested past
 * `depthLimit` (up to 200,000 deep), or a string at a random text path by one of `hugeChars`
 * characters (an oversized prompt).
 */
export function hostileBodies(
  seed: number,
  count: number,
  good: unknown,
  depthLimit: number,
  hugeChars: number,
): HostileBody[] {
  const random = mulberry32(seed);
  const paths = valuePaths(good);
  // The prompt's texts: message contents, Responses' input and instructions, Anthropic's system (a tool's strings are not prompt text).
  const textPaths = paths.filter(
    (p) =>
      !p.includes("tools") &&
      ["content", "input", "text", "instructions", "system"].includes(String(p[p.length - 1])) &&
      typeof p.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], good) === "string",
  );
  return Array.from({ length: count }, () => {
    if (textPaths.length > 0 && chance(random, 0.25)) {
      const path = pick(random, textPaths);
      return {
        text: replacedAt(good, path, JSON.stringify(pick(random, ["x", "word ", "\u00e9", "{["]).repeat(hugeChars))),
        label: `${path.join(".")}: a string of ${hugeChars} characters`,
      };
    }
    const path = pick(random, paths);
    const depth = depthLimit + 1 + (chance(random, 0.5) ? randomInt(random, 8) : randomInt(random, 200_000));
    const array = chance(random, 0.5);
    const raw = array ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    return {
      text: replacedAt(good, path, raw),
      label: `${path.join(".")}: ${array ? "arrays" : "objects"} nested ${depth} deep`,
    };
  });
}
