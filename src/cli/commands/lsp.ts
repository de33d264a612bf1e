// `arl lsp --stdio [--debounce MS]`: the language server, speaking LSP over stdin/stdout.
import { createConnection, ProposedFeatures } from "vscode-languageserver/node";
import { DEFAULT_MAX_MESSAGE_BYTES, FramingGuard } from "../../lsp/framing.js";
import { startServer } from "../../lsp/server.js";
import { arlVersion } from "../../plan/version.js";
import { defineCommand } from "../command.js";
import { UsageError } from "../io.js";

const usage = `Usage: arl lsp --stdio [--debounce MS]

Runs the ARL language server (Language Server Protocol over stdin/stdout) for editors:
diagnostics as 'arl check' reports them, hover, completion, go to definition, document
symbols, formatting, quick fixes and rename.
  --stdio         talk LSP on stdin/stdout (the only transport)
  --debounce MS   quiet period after an edit before diagnostics are computed (default: adaptive,
                  25 ms for small files up to 150 ms for files of 2,500 lines or more;
                  also initializationOptions.debounceMs or ARL_LSP_DEBOUNCE_MS)
A message over 64 MiB (ARL_LSP_MAX_MESSAGE_BYTES) is read past, not kept: a request gets an
error answer, a notification an error message; the server goes on.`;

export const lspCommand = defineCommand({
  name: "lsp",
  summary: "run the language server for editors (LSP over stdio)",
  usage,
  options: {
    stdio: { type: "boolean", default: false },
    debounce: { type: "string" },
    clientProcessId: { type: "string" },
  },
  positionals: false,
  async run(parsed, io) {
    if (!parsed.values.stdio) throw new UsageError("the language server needs --stdio (the only transport it speaks)");
    const raw = parsed.values.debounce ?? io.env.ARL_LSP_DEBOUNCE_MS;
    let debounceMs: number | undefined;
    if (raw !== undefined) {
      debounceMs = Number(raw);
      if (!Number.isFinite(debounceMs) || debounceMs < 0)
        throw new UsageError(`--debounce needs a number of milliseconds, not '${raw}'`);
    }
    // stdout carries the protocol: anything else printed there would corrupt it.
    for (const method of ["log", "info", "debug", "warn"] as const)
      console[method] = (...data: unknown[]) => console.error(...data);
    const rawMax = io.env.ARL_LSP_MAX_MESSAGE_BYTES;
    const maxContentLength = rawMax === undefined ? DEFAULT_MAX_MESSAGE_BYTES : Number(rawMax);
    if (!Number.isSafeInteger(maxContentLength) || maxContentLength < 1)
      throw new UsageError(`ARL_LSP_MAX_MESSAGE_BYTES needs a number of bytes, not '${rawMax}'`);
    // Malformed framing is dropped with a logged reason instead of wedging the connection.
    const log = (reason: string) => process.stderr.write(`arl lsp: ${reason}\n`);
    const input = process.stdin.pipe(new FramingGuard({ log, maxContentLength }));
    const connection = createConnection(ProposedFeatures.all, input, process.stdout);
    startServer(connection, { ...(debounceMs !== undefined ? { debounceMs } : {}), version: arlVersion() });
    // The connection ends the process on `exit` or when stdin closes.
    return new Promise<number>(() => {});
  },
});
