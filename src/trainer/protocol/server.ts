// The trainer's side of the protocol for trainers written in TypeScript (the embedded trainer,
// test doubles): frames in on stdin, one handler per method, frames out on stdout.
import {
  PROTOCOL_NAME,
  PROTOCOL_VERSION,
  type ErrorBody,
  type Method,
  type Methods,
} from "../../contracts/trainer-protocol.js";
import { FrameDecoder, writeFrame } from "./framing.js";

export type Handlers = { [M in Method]?: (params: Methods[M][0]) => Methods[M][1] | Promise<Methods[M][1]> };

export class RequestError extends Error {
  constructor(
    readonly code: ErrorBody["code"],
    message: string,
  ) {
    super(message);
  }
}

/** Serves requests until `shutdown` or end of input. Logs go to stderr, never stdout. */
export function serve(
  handlers: Handlers,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const decoder = new FrameDecoder();
  let queue = Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => resolve();
    input.on("end", () => void queue.then(finish));
    input.on("data", (chunk: Buffer) => {
      let messages: unknown[];
      try {
        messages = decoder.push(chunk);
      } catch (error) {
        process.stderr.write(`trainer: ${(error as Error).message}\n`);
        process.exitCode = 2;
        finish();
        return;
      }
      for (const m of messages) {
        queue = queue.then(async () => {
          const { id, method, params } = m as { id: number; method: Method; params: unknown };
          const reply = (body: object) => writeFrame(output, { id, ...body });
          if (method === "handshake") {
            const p = params as Methods["handshake"][0];
            if (p.protocol !== PROTOCOL_NAME || p.version !== PROTOCOL_VERSION) {
              reply({
                error: {
                  code: "unsupported",
                  message: `this trainer speaks ${PROTOCOL_NAME} version ${PROTOCOL_VERSION}`,
                },
              });
              return;
            }
          }
          const handler = handlers[method] as ((p: unknown) => unknown) | undefined;
          if (!handler) {
            reply({
              error: { code: "unsupported", message: `method '${String(method)}' is not supported by this trainer` },
            });
            return;
          }
          try {
            reply({ result: await handler(params) });
          } catch (error) {
            if (error instanceof RequestError) reply({ error: { code: error.code, message: error.message } });
            else {
              process.stderr.write(`trainer: ${method} failed: ${(error as Error).stack ?? String(error)}\n`);
              reply({ error: { code: "internal", message: (error as Error).message } });
            }
          }
          if (method === "shutdown") {
            input.removeAllListeners("data");
            finish();
          }
        });
      }
    });
  });
}
