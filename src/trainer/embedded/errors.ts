// The protocol's request errors (docs/protocol.md "Messages"): what the trainer answers a request it
// refuses with. The server (protocol/server.ts, where RequestError is defined for every trainer
// written in TypeScript) sends a thrown RequestError as an error response with its code;
// anything else is answered as `internal`.
import { RequestError } from "../protocol/server.js";

/** The request is malformed or does not fit the trainer's state (not configured, no such slot). */
export const invalid = (message: string): RequestError => new RequestError("invalid_request", message);

/** The request is well formed but asks for something this trainer does not serve. */
export const unsupported = (message: string): RequestError => new RequestError("unsupported", message);

/**
 * Runs `f`, answering the input errors of the shared maths (`RangeError`, and `inputError`'s
 * class, e.g. losses.ts's LossInputError) as `invalid_request` with `prefix` before the message.
 */
export function invalidOnInputError<T>(
  f: () => T,
  inputError: (new (...args: never[]) => Error) | null = null,
  prefix = "",
): T {
  try {
    return f();
  } catch (error) {
    if (error instanceof RangeError || (inputError && error instanceof inputError))
      throw invalid(`${prefix}${error.message}`);
    throw error;
  }
}

/**
 * The wasm heap's end (4 GB): tfjs-backend-wasm fails an allocation past it as a WebAssembly
 * RuntimeError "memory access out of bounds" (or a RangeError from growing the buffer, or from a
 * view longer than the heap: "Invalid typed array length"). Answered as `out_of_memory` with what
 * makes a request smaller, instead of an internal error's stack. Batches are cut to a budget
 * (batching.ts), so what is left is one sequence too long for a chunk of its own.
 */
export function outOfMemory(method: string, error: unknown): RequestError | undefined {
  const message = error instanceof Error ? error.message : "";
  const wasm = error instanceof Error && error.name === "RuntimeError" && /memory access out of bounds/.test(message);
  const grow =
    error instanceof RangeError &&
    /WebAssembly\.Memory|Array buffer allocation failed|Out of memory|Invalid typed array length/i.test(message);
  if (!wasm && !grow) return undefined;
  return new RequestError(
    "out_of_memory",
    `${method}: the embedded trainer ran out of its 4 GB WebAssembly memory (${message}); a sequence of this request is too long for one chunk (its read-out attention over its length). ` +
      "Shorten the episodes (policy.sampling.max_new_tokens, harness.max_response_tokens, harness.max_turns) or lower ARL_TINY_CHUNK_TOKENS",
  );
}
