// The rows of a Parquet file (a dataset env's rows as veRL's and TRL's datasets ship them),
// decoded by hyparquet. hyparquet's API is asynchronous and the compiler is not (lowering reads
// the rows to check them and to record their splits), so the decode runs in a worker thread that
// the caller waits for, blocked on a shared word: the worker posts the rows to a message port and
// sets the word, and the caller takes the message off the port synchronously.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";

/** The longest a decode may take; a worker that died (out of memory) never sets the word. */
const DECODE_TIMEOUT_MS = 10 * 60 * 1000;

// CommonJS, as an eval worker is: it imports hyparquet by URL. Each row goes through hyparquet's
// toJson, so that 64-bit integers arrive as numbers, dates as ISO text, bytes as lists of numbers:
// values every scorer (and JSON to the env host) can take.
const WORKER = `
const { workerData } = require("node:worker_threads");
(async () => {
  const { port, done, hyparquet, bytes } = workerData;
  let message;
  try {
    const { parquetReadObjects, toJson } = await import(hyparquet);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const rows = await parquetReadObjects({ file });
    message = { rows: rows.map((row) => toJson(row)) };
  } catch (error) {
    message = { error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(message);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
})();
`;

/** hyparquet's entry, resolved from this module (node's own condition: the file reader included). */
const hyparquetUrl = (): string => pathToFileURL(createRequire(import.meta.url).resolve("hyparquet")).href;

/** The rows of the Parquet file `bytes` as JSON objects, in file order; throws with hyparquet's message when it cannot decode them. */
export function parquetObjects(bytes: Uint8Array): Record<string, unknown>[] {
  const { port1, port2 } = new MessageChannel();
  const done = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { port: port2, done, hyparquet: hyparquetUrl(), bytes },
    transferList: [port2],
  });
  try {
    if (Atomics.wait(done, 0, 0, DECODE_TIMEOUT_MS) === "timed-out")
      throw new Error(`decoding did not finish in ${DECODE_TIMEOUT_MS / 60_000} minutes (out of memory?)`);
    const message = receiveMessageOnPort(port1)?.message as
      { rows: Record<string, unknown>[] } | { error: string } | undefined;
    if (message === undefined) throw new Error("the decoder sent no rows");
    if ("error" in message) throw new Error(`not a Parquet file hyparquet can read: ${message.error}`);
    return message.rows;
  } finally {
    void worker.terminate();
    port1.close();
  }
}
