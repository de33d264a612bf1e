// Reading an engine's JSON answer field by field. Every failure is an EngineProtocolError that
// names the engine, the field's path in the answer and a short excerpt of what was there, so a
// server that changed its format (or answered an error page) is reported as such, never as a
// TypeError from deep inside the client.

import { EngineProtocolError, type EngineName } from "./contract.js";

const EXCERPT_CHARS = 80;

/** A short, single-line rendering of a JSON value for an error message. */
function excerpt(value: unknown): string {
  if (value === undefined) return "nothing";
  // JSON.parse output always stringifies; anything else (a BigInt, a cycle) is named by its type.
  let text: string;
  try {
    text = JSON.stringify(value) ?? typeof value;
  } catch {
    text = `a ${typeof value}`;
  }
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** Reads one engine's answer; `path` strings are the fields' places in it, e.g. `choices[0].token_ids`. */
export class AnswerReader {
  constructor(private readonly engine: EngineName) {}

  fail(path: string, value: unknown, expected: string): never {
    throw new EngineProtocolError(`${this.engine} answered ${path} = ${excerpt(value)}; expected ${expected}`);
  }

  object(value: unknown, path: string): Readonly<Record<string, unknown>> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) this.fail(path, value, "an object");
    return value as Record<string, unknown>;
  }

  array(value: unknown, path: string): readonly unknown[] {
    if (!Array.isArray(value)) this.fail(path, value, "a list");
    return value;
  }

  string(value: unknown, path: string): string {
    if (typeof value !== "string") this.fail(path, value, "a string");
    return value;
  }

  /** A token id: an integer in [0, 2^31), which is what the buffer's Int32Array can hold. */
  tokenId(value: unknown, path: string): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0x7fffffff) {
      this.fail(path, value, "a token id (an integer in [0, 2^31))");
    }
    return value;
  }

  tokenIds(value: unknown, path: string): Int32Array {
    const items = this.array(value, path);
    const ids = new Int32Array(items.length);
    items.forEach((item, k) => (ids[k] = this.tokenId(item, `${path}[${k}]`)));
    return ids;
  }

  /** A sampled token's log-probability: finite (the token was sampled, so it had mass) and not above 0 beyond rounding. */
  logprob(value: unknown, path: string): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value > 1e-4) {
      this.fail(path, value, "a finite log-probability (a number <= 0)");
    }
    return Math.min(value, 0);
  }

  /**
   * The one weight version of a list of `{version, start, end}` spans (both engines' format);
   * null when there are none. Spans of different versions mean the generation was sampled by
   * two sets of weights: the server was not drained before a weight sync, and the generation
   * has no single behaviour policy.
   */
  singleVersion(value: unknown, path: string): string | null {
    if (value === undefined || value === null) return null;
    const spans = this.array(value, path);
    const versions = new Set(
      spans.map((span, k) => this.string(this.object(span, `${path}[${k}]`).version, `${path}[${k}].version`)),
    );
    if (versions.size > 1)
      this.fail(
        path,
        value,
        "one weight version for the whole generation (was the server drained before a weight sync?)",
      );
    const [version] = versions;
    return version ?? null;
  }
}

/** The label both engines give weights they were launched with, before any sync names them. */
const LAUNCH_WEIGHT_LABEL = "default";

/** A reported weight label as the contract gives it: null for the launch weights. */
export function syncedVersion(label: string | null): string | null {
  return label === LAUNCH_WEIGHT_LABEL ? null : label;
}
