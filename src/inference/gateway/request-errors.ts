// What an exception while a model session handles one request becomes (docs/gateway.md): the
// request's own error, answered 400 or 500, or the run's failure when the trainer behind every
// session is gone. Apart from the session so that the line between a request's failure and the
// run's is drawn in one place.
import { EnvError } from "../../contracts/env.js";
import { TrainerError } from "../../trainer/protocol/client.js";
import { GatewayError } from "./contract.js";

/** How a trainer fails when it can no longer serve anyone: the run's failure, never one request's. */
const TRAINER_GONE: ReadonlySet<TrainerError["code"]> = new Set(["died", "protocol", "timeout", "stopped"]);

/**
 * What an exception while handling one request is: a GatewayError as it is; the trainer's error
 * answer to this request (it is alive, and serves the next one) and any failure of the session's
 * own handling (a value it cannot render, a bug) that request's error, answered 400 or 500 with
 * the original as its cause (the gateway logs it). Only a trainer that is gone (died, hung,
 * broke the protocol) and an engine without a server (EnvError) end more than the request.
 */
export function requestError(error: unknown): never {
  if (error instanceof GatewayError || error instanceof EnvError) throw error;
  if (error instanceof TrainerError && TRAINER_GONE.has(error.code)) throw error;
  const refused = error instanceof TrainerError && (error.code === "invalid_request" || error.code === "unsupported");
  const answer = refused
    ? new GatewayError(
        400,
        `the model cannot take this request: ${error.message}`,
        "invalid_request_error",
        null,
        "invalid_value",
      )
    : new GatewayError(
        500,
        "the gateway failed to answer this request (the error is in the run's log); the session serves the next one",
        "server_error",
      );
  answer.cause = error;
  throw answer;
}
