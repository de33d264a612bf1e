// Language-server framing: how long a hover waits behind one large notification, over the real
// protocol (`arl lsp --stdio` in a child process), for 10 and 50 MB; and the framing guard alone
// on the same message in 64 KiB chunks (as a pipe delivers it). The guard joins a body once, when
// it is complete; joining on every chunk made the hover after a 50 MB message wait 72 s.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  createProtocolConnection,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver/node";
import { FramingGuard } from "../lsp/framing.js";
import { defaultMeasureOptions, timed, type BenchResult, type BenchSection, type MeasureOptions } from "./harness.js";

const BIN = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const SIZES_MB = [10, 50] as const;
const CHUNK_BYTES = 64 * 1024;
/** The method of the large notification: one the server does not handle, so only the reading costs. */
const LARGE = "$/arl/bench/large";
const HOVER = { textDocument: { uri: "file:///nowhere/bench.arl" }, position: { line: 0, character: 0 } };

function framedNotification(bytes: number): Buffer {
  const body = Buffer.from(
    JSON.stringify({ jsonrpc: "2.0", method: LARGE, params: { text: "x".repeat(bytes) } }),
    "utf8",
  );
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "latin1"), body]);
}

/** Milliseconds from sending a notification of `bytes` characters to the answer of the hover sent after it. */
async function hoverAfter(bytes: number): Promise<number> {
  const child = spawn(process.execPath, [BIN, "lsp", "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
  const connection = createProtocolConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  connection.listen();
  try {
    await connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
    await connection.sendNotification(InitializedNotification.type, {});
    const text = "x".repeat(bytes);
    const start = performance.now();
    void connection.sendNotification(LARGE, { text });
    await connection.sendRequest(HoverRequest.type, HOVER);
    return performance.now() - start;
  } finally {
    await connection.sendNotification(ExitNotification.type).catch(() => {});
    connection.dispose();
    setTimeout(() => child.kill(), 2000).unref();
  }
}

export function lspFramingSection(options: MeasureOptions = defaultMeasureOptions): BenchSection {
  return {
    name: "language server: framing of large messages",
    describe: () => [
      `A notification of ${SIZES_MB.join(" or ")} MB (a method the server ignores), then a hover: the time from sending the`,
      "first to the hover's answer, over stdio with `arl lsp --stdio` (one run each). Then the framing guard alone on the",
      `same message written in ${CHUNK_BYTES / 1024} KiB chunks, in-process.`,
    ],
    async run(): Promise<BenchResult[]> {
      const rows: BenchResult[] = [];
      for (const mb of SIZES_MB) {
        const ms = await hoverAfter(mb * 1_000_000);
        rows.push({
          name: `hover answered after a ${mb} MB notification`,
          value: ms,
          unit: " ms",
          goal: "< 5000 ms (was 72 s at 50 MB)",
          met: ms < 5000,
        });
      }
      for (const mb of SIZES_MB) {
        const message = framedNotification(mb * 1_000_000);
        const guardAlone = () => {
          const guard = new FramingGuard({ log: () => {}, maxContentLength: message.length });
          guard.on("data", () => {});
          for (let at = 0; at < message.length; at += CHUNK_BYTES) guard.write(message.subarray(at, at + CHUNK_BYTES));
          guard.destroy();
        };
        rows.push(
          await timed(
            `FramingGuard alone, ${mb} MB in ${CHUNK_BYTES / 1024} KiB chunks`,
            guardAlone,
            { bytes: message.length },
            options,
          ),
        );
      }
      return rows;
    },
  };
}
