// `npm run bench`: runs the benchmark sections in order and prints one table per section
// (`--json` prints the results as JSON instead). Timings are never asserted by unit tests.
// The options are in options.ts (`--help` prints them with the sections' names).
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
import { toolPeerSection } from "./peer-tools.js";
import {
  defaultMeasureOptions,
  formatTable,
  gcExposed,
  type BenchResult,
  type BenchSection,
  type MeasureOptions,
} from "./harness.js";
import { benchUsage, BenchUsageError, parseBenchArgs, pickSections, type BenchArgs } from "./options.js";

function sectionsOf(args: BenchArgs): { all: BenchSection[]; onRequest: BenchSection[] } {
  const measure: MeasureOptions = {
    runs: args.runs ?? Math.max(7, defaultMeasureOptions.runs),
    warmup: args.warmup ?? defaultMeasureOptions.warmup,
  };
  const all: BenchSection[] = [
    frontendSection(measure, args.lines ?? 10_000, args.instructions),
    scalingSection(measure),
    planSection(measure),
    protocolSection(measure),
    lspSection(measure),
    lspFramingSection(measure),
    roomsSection(measure),
    sqlSection(measure),
    findmaxSection(measure),
    asyncSection({ seeds: args.seeds, rounds: args.rounds, iterations: args.steps }),
    gatewaySection(measure),
    sftStepSection(measure),
    quickstartSection(),
    peerSection({ rounds: args.rounds, steps: args.steps, tokens: args.tokens }),
    toolPeerSection({ rounds: args.rounds, steps: args.steps }),
  ];
  // The miniature reproductions take about 10 minutes each: only on request (`--only mini`).
  return { all, onRequest: miniSections() };
}

async function main(argv: readonly string[]): Promise<void> {
  let args: BenchArgs;
  let sections: BenchSection[];
  try {
    args = parseBenchArgs(argv);
    const { all, onRequest } = sectionsOf(args);
    if (args.help) {
      console.log(benchUsage([...all, ...onRequest].map((s) => s.name)));
      return;
    }
    sections = pickSections(all, onRequest, args.only);
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    const { all, onRequest } = sectionsOf({ help: false, json: false, instructions: false });
    console.error(`arl bench: ${error.message}\n\n${benchUsage([...all, ...onRequest].map((s) => s.name))}`);
    process.exitCode = 2;
    return;
  }
  const json = args.json;

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
