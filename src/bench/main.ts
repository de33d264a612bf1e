// `npm run bench`: runs the benchmark sections in order and prints one table per section
// (`--json` prints the results as JSON instead). Timings are never asserted by unit tests.
// Options: --json, --runs N (measured runs, default 9), --warmup N (default 3), --lines N (spec size),
// --seeds N (the asynchronous rollout section's seeds per row, default 1),
// --only TEXT (just the sections whose name contains TEXT; the experiments/mini/ sections run only
// this way, e.g. --only mini), --instructions (the front end's cases
// also counted in instructions under valgrind: src/bench/instructions.ts).
import os from "node:os";
import { frontendSection } from "./frontend.js";
import { planSection } from "./plan.js";
import { lspSection } from "./lsp.js";
import { lspFramingSection } from "./lsp-framing.js";
import { protocolSection } from "./protocol.js";
import { roomsSection, sqlSection, findmaxSection } from "./envs.js";
import { asyncSection } from "./async.js";
import { quickstartSection } from "./quickstart.js";
import { miniSections } from "./mini.js";
import { sftStepSection } from "./sft-step.js";
import { scalingSection } from "./scaling.js";
import { gatewaySection } from "./gateway.js";
import { peerSection } from "./peer.js";
import {
  defaultMeasureOptions,
  formatTable,
  gcExposed,
  type BenchResult,
  type BenchSection,
  type MeasureOptions,
} from "./harness.js";
import { at } from "../contracts/checked.js";

function option(args: readonly string[], name: string): number | undefined {
  const k = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (k < 0) return undefined;
  const arg = at(args, k);
  const raw = arg.includes("=") ? arg.split("=")[1] : args[k + 1];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer, got ${raw}`);
  return n;
}

async function main(args: readonly string[]): Promise<void> {
  const json = args.includes("--json");
  const measure: MeasureOptions = {
    runs: option(args, "--runs") ?? Math.max(7, defaultMeasureOptions.runs),
    warmup: option(args, "--warmup") ?? defaultMeasureOptions.warmup,
  };
  // Later sections (semantic check, lowering, protocol throughput) are appended here.
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
  const all: BenchSection[] = [
    frontendSection(measure, option(args, "--lines") ?? 10_000, args.includes("--instructions")),
    scalingSection(measure),
    planSection(measure),
    protocolSection(measure),
    lspSection(measure),
    lspFramingSection(measure),
    roomsSection(measure),
    sqlSection(measure),
    findmaxSection(measure),
    asyncSection(option(args, "--seeds") ?? 1),
    gatewaySection(measure),
    sftStepSection(measure),
    quickstartSection(),
    peerSection(),
  ];
  // The miniature reproductions take about 10 minutes each: only on request (`--only mini`).
  const onRequest: BenchSection[] = miniSections();
  const sections = only === undefined ? all : [...all, ...onRequest].filter((s) => s.name.includes(only));

  const environment = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: os.cpus()[0]?.model ?? "unknown",
    cpus: os.cpus().length,
    gcBetweenRuns: gcExposed(),
  };
  const out: { section: string; description: string[]; results: BenchResult[] }[] = [];
  if (!json) {
    console.log(
      `arl bench: node ${environment.node}, ${environment.platform}, ${environment.cpu} (${environment.cpus} CPUs)`,
    );
    if (!environment.gcBetweenRuns) console.log("(run node with --expose-gc to collect garbage between runs)");
  }
  for (const section of sections) {
    const description = section.describe?.() ?? [];
    if (!json) {
      console.log(`\n== ${section.name} ==`);
      for (const line of description) console.log(line);
    }
    const results = await section.run();
    out.push({ section: section.name, description, results });
    if (!json) console.log(`\n${formatTable(results)}`);
  }
  if (json) console.log(JSON.stringify({ environment, sections: out }, null, 2));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
