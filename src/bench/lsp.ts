// Language-server latency: the time from sending `textDocument/didChange` to receiving the
// `textDocument/publishDiagnostics` for that version, over the real protocol (`arl lsp --stdio`
// in a child process), on a generated 2,000-line spec; next to the in-process `Compiler.check`
// of the same text. The server runs with --debounce 0, so the figures exclude the debounce
// (adaptive in an editor: `adaptiveDebounceMs`), which is reported on its own row.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type PublishDiagnosticsParams,
} from "vscode-languageserver/node";
import { Compiler } from "../compiler.js";
import { diskHost, ModuleLoader } from "../language/imports.js";
import { IncrementalChecker } from "../lsp/incremental.js";
import { adaptiveDebounceMs } from "../lsp/diagnostics.js";
import { reparse } from "../language/incremental-parse.js";
import { parse, type ParseResult } from "../language/parse.js";
import { STDLIB_ROOT } from "../contracts/paths.js";
import {
  consume,
  defaultMeasureOptions,
  paired,
  timed,
  type BenchResult,
  type BenchSection,
  type MeasureOptions,
} from "./harness.js";
import { at, last } from "../contracts/checked.js";

const BIN = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));

/** One unit: an env, a tool and an experiment with a sweep (about 60 lines), all valid. */
function unit(i: number): string {
  return `/// Task family ${i}: the findMax family with its own task count.
env family_${i} extends findmax.task {
  tasks: ${100 + i}
  split { train: 0.8, test: 0.2 }
}

/// Looks an entry of family ${i} up.
tool lookup_${i} {
  description: "Look up one entry of family ${i} and return its text."
  parameters {
    key { type: string, description: "The entry's key." }
    limit { type: integer, minimum: 1, maximum: 100, required: false }
  }
}

/// Experiment ${i}: GRPO-style recipe with a leave-one-out baseline.
experiment exp_${i} {
  description: "family ${i}: outcome reward, potential-based progress, tool output masked"
  seed: ${i}

  policy {
    model: "builtin:tiny"
    sampling { temperature: 1.0, top_p: 1.0, max_new_tokens: 96 }
  }

  env code extends family_${i} {}

  harness {
    tools: [code.run_tests, code.read_code, code.write_code, code.finish]
    format: function_call
    max_turns: 8
    on_budget: truncate
    observation { max_tokens: 256, overflow: keep_head }
  }

  reward {
    /// 1 when every hidden test passes.
    success: 1.0 * outcome.tests_passed
    progress: potential(0.1 * state.visible_pass_fraction)
    cost: -0.01 * episode.tool_calls
  }

  mask { loss: generated }

  algorithm extends algo.rloo {
    group_size: 4
    reduction: token_mean
  }

  rollout { tasks_per_batch: 16, iterations: 40 }
  eval { split: test, every: 10, k: [1, 4] }
  sweep { harness.max_turns: [6, 8] }
}
`;
}

export function generatedSpec(targetLines = 2000): { text: string; lines: number; units: number } {
  const head = `// Language-server benchmark spec (generated).\nimport "std/algorithms" as algo\nimport "std/envs/findmax" as findmax\n\n`;
  const parts = [head];
  let lines = head.split("\n").length - 1;
  let units = 0;
  while (lines < targetLines) {
    const u = `${unit(units)}\n`;
    parts.push(u);
    lines += u.split("\n").length - 1;
    units++;
  }
  return { text: parts.join(""), lines, units };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return at(sorted, rank);
}

interface LatencyRun {
  readonly samples: number[];
  readonly diagnostics: number;
}

/** Opens the spec in a server started with --debounce 0 and times `edits` sequential edits. */
async function serverLatency(file: string, text: string, edits: number, warmup: number): Promise<LatencyRun> {
  const child = spawn(process.execPath, [BIN, "lsp", "--stdio", "--debounce", "0"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createProtocolConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const uri = pathToFileURL(file).href;
  const waiting = new Map<number, (p: PublishDiagnosticsParams) => void>();
  connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
    if (p.uri !== uri || p.version === undefined) return;
    waiting.get(p.version)?.(p);
    waiting.delete(p.version);
  });
  connection.listen();
  const published = (version: number) =>
    new Promise<PublishDiagnosticsParams>((resolve) => waiting.set(version, resolve));
  try {
    await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      initializationOptions: { debounceMs: 0 },
    });
    await connection.sendNotification(InitializedNotification.type, {});
    const opened = published(1);
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "arl", version: 1, text },
    });
    const first = await opened;
    // Each edit rewrites the seed of one experiment (`seed: N`): one small range edit, as typing does.
    const lines = text.split("\n");
    const seedLines = lines.flatMap((l, i) => (/^\s*seed: \d+$/.test(l) ? [i] : []));
    const samples: number[] = [];
    for (let k = 0; k < warmup + edits; k++) {
      const version = k + 2;
      const line = at(seedLines, k % seedLines.length);
      const old = at(lines, line);
      const next = `  seed: ${1000 + k}`;
      lines[line] = next;
      const done = published(version);
      const start = performance.now();
      await connection.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version },
        contentChanges: [
          { range: { start: { line, character: 0 }, end: { line, character: old.length } }, text: next },
        ],
      });
      consume(await done);
      if (k >= warmup) samples.push(performance.now() - start);
    }
    return { samples, diagnostics: first.diagnostics.length };
  } finally {
    await Promise.race([connection.sendRequest(ShutdownRequest.type), new Promise((r) => setTimeout(r, 2000))]).catch(
      () => {},
    );
    await connection.sendNotification(ExitNotification.type).catch(() => {});
    connection.dispose();
    setTimeout(() => child.kill(), 2000).unref();
  }
}

export function lspSection(
  options: MeasureOptions = defaultMeasureOptions,
  edits = 50,
  targetLines = 2000,
): BenchSection {
  const spec = generatedSpec(targetLines);
  return {
    name: "language server: didChange -> publishDiagnostics",
    describe: () => [
      `Generated spec: ${spec.lines} lines (${spec.units} envs, tools and experiments with sweeps), no diagnostics.`,
      `${edits} sequential one-line edits after 5 warm-up edits; each timed from sending didChange to receiving`,
      "publishDiagnostics for its version, over stdio with `arl lsp --stdio --debounce 0` (debounce excluded; see its row).",
    ],
    async run(): Promise<BenchResult[]> {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-lsp-"));
      try {
        const file = path.join(dir, "spec.arl");
        writeFileSync(file, spec.text);
        const inProcess = await timed(
          "Compiler.check, in-process (same file)",
          () => new Compiler().check(file),
          { lines: spec.lines },
          options,
        );
        // What one edit costs the server in-process: loading (parsing) the file, and re-checking
        // the one experiment it touched (two texts that differ in one seed, checked in turn).
        const load = await timed(
          "load (lex, parse, imports), in-process",
          () => new ModuleLoader().load(file),
          { lines: spec.lines },
          options,
        );
        const other = spec.text.replace(/seed: 0\n/, "seed: 999\n");
        const programs = [
          new ModuleLoader().load(file),
          new ModuleLoader({ readFile: (f) => (f === file ? other : diskHost.readFile(f)) }).load(file),
        ];
        const checker = new IncrementalChecker();
        let turn = 0;
        const recheck = await timed(
          "incremental re-check of one edited experiment, in-process",
          () => checker.check(at(programs, turn++ % 2)),
          { note: "load excluded" },
          options,
        );
        // The server's whole pipeline for one edit, in-process (load of the new text, then the
        // incremental check), with the file parsed in full or from its previous parse; interleaved.
        const texts = [spec.text, other];
        const oneEdit = (incremental: boolean) => {
          const checker = new IncrementalChecker();
          const last = new Map<string, ParseResult>();
          let k = 0;
          const parseText = (text: string, f: string): ParseResult => {
            const previous = incremental ? last.get(f) : undefined;
            const parsed = previous ? reparse(previous, text, f) : parse(text, f);
            last.set(f, parsed);
            return parsed;
          };
          return () => {
            const text = at(texts, k++ % 2);
            const host = { readFile: (f: string) => (f === file ? text : diskHost.readFile(f)) };
            return checker.check(new ModuleLoader(host, STDLIB_ROOT, parseText).load(file));
          };
        };
        const edit = await paired(
          {
            name: "one edit in-process: full parse + load + incremental check",
            fn: oneEdit(false),
            work: { lines: spec.lines },
          },
          {
            name: "one edit in-process: incremental parse + load + incremental check",
            fn: oneEdit(true),
            work: { lines: spec.lines },
          },
          { name: "one edit in-process, full parse / incremental parse" },
          options,
        );
        const run = await serverLatency(file, spec.text, edits, 5);
        const sorted = [...run.samples].sort((a, b) => a - b);
        const p50 = percentile(sorted, 50);
        const p95 = percentile(sorted, 95);
        const goalMs = 100;
        return [
          inProcess,
          load,
          recheck,
          edit.a,
          edit.b,
          edit.ratio,
          {
            name: "didChange -> publishDiagnostics p50",
            value: p50,
            unit: " ms",
            note: `${run.samples.length} edits; ${run.diagnostics} diagnostics in the spec`,
          },
          {
            name: "didChange -> publishDiagnostics p95",
            value: p95,
            unit: " ms",
            goal: `p95 <= ${goalMs} ms`,
            met: p95 <= goalMs,
          },
          { name: "didChange -> publishDiagnostics max", value: last(sorted), unit: " ms" },
          {
            name: "debounce in an editor (not included above)",
            value: adaptiveDebounceMs(spec.lines),
            unit: " ms",
            note: `adaptive for ${spec.lines} lines; initializationOptions.debounceMs or --debounce fixes it`,
          },
        ];
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
