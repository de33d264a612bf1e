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
export function invalidOnInputError<T>(f: () => T, inputError: (new (...args: never[]) => Error) | null = null, prefix = ""): T {
  try {
    return f();
  } catch (error) {
    if (error instanceof RangeError || (inputError && error instanceof inputError)) throw invalid(`${prefix}${error.message}`);
    throw error;
  }
}
