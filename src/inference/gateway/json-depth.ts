// The nesting depth of a request's JSON, measured on its text before it is parsed
// (docs/gateway.md#errors-and-limits). Much of what handles a request afterwards recurses over
// the value (JSON.stringify of the offered tools, ajv, the trainer protocol's framing, a
// template's `tojson`), so a body nested thousands deep would overflow the stack far from the
// request that caused it. One iterative pass over the text refuses it first.
import { GatewayError } from "./contract.js";

/** How deep a request's JSON may nest (objects and arrays): far above any real tool schema. */
export const MAX_JSON_DEPTH = 64;

/** One open object or array: where its current member's key lies in the text, or its element index. */
interface Frame {
  readonly array: boolean;
  index: number;
  keyStart: number;
  keyEnd: number;
  /** An object waiting for a member's key (after `{` or `,`). */
  expectKey: boolean;
}

/**
 * Where `text` first opens an object or array deeper than `limit`, as a JSON path
 * (`tools[0].function.parameters.properties.a`), "" for the top level; undefined when it never
 * does. Strings are skipped, escapes included; text that is not JSON is measured as far as its
 * brackets go (JSON.parse refuses it afterwards).
 */
export function tooDeepAt(text: string, limit = MAX_JSON_DEPTH): string | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
      const top = stack[stack.length - 1];
      if (top !== undefined && !top.array && top.expectKey) {
        top.keyStart = start;
        top.keyEnd = i;
        top.expectKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= limit) return pathOf(text, stack);
      stack.push({ array: c === 0x5b, index: 0, keyStart: -1, keyEnd: -1, expectKey: c === 0x7b });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
    }
  }
  return undefined;
}

/** The path of the value being read in the innermost frame: each frame's current key or index. */
function pathOf(text: string, stack: readonly Frame[]): string {
  let path = "";
  for (const frame of stack) {
    if (frame.array) {
      path += `[${frame.index}]`;
      continue;
    }
    let key = "?";
    try {
      key = String(JSON.parse(text.slice(frame.keyStart, frame.keyEnd + 1)));
    } catch {
      // A key that is no JSON string: the body will be refused as invalid JSON anyway.
    }
    if (key.length > 40) key = `${key.slice(0, 40)}...`;
    path += /^[A-Za-z_$][\w$]*$/.test(key) ? `${path === "" ? "" : "."}${key}` : `[${JSON.stringify(key)}]`;
  }
  return path;
}

/**
 * The refusal of JSON text (`what`: "the request body", or a field holding JSON text) nested
 * deeper than `limit`, its param the path of the first value too deep (or `param`, the path of
 * the field that holds the text); undefined when the text is within the limit.
 */
export function tooDeepError(
  text: string,
  what: string,
  param?: string,
  limit = MAX_JSON_DEPTH,
): GatewayError | undefined {
  const at = tooDeepAt(text, limit);
  if (at === undefined) return undefined;
  const where = at === "" ? "its top level" : at;
  return new GatewayError(
    400,
    `${what} nests JSON deeper than ${limit} levels (objects and arrays), at ${where}: that is the gateway's limit; flatten the value (a tool's parameter schema rarely needs more than 10 levels)`,
    "invalid_request_error",
    // A field's text is one value of the request: its path is the param.
    param ?? (at === "" ? null : at),
    "json_too_deep",
  );
}
