// `arl serve PLAN.json | SPEC.arl[#experiment/variant] --api vllm|sglang [--host H] [--port N]
// [--trainer-command CMD] [--checkpoint DIR]`: serves a plan's policy over HTTP in the token-in
// subset of vLLM or SGLang (docs/gateway.md#engine-mode), backed by the plan's trainer process,
// with the engine's weight sync. It is what `arl run --engine-command` starts in place of a real
// engine, and a way to serve an ARL checkpoint to programs.
import { existsSync } from "node:fs";
import path from "node:path";
import { EnvError } from "../../contracts/env.js";
import { verifyPlanDataFiles } from "../../envs/data-files.js";
import { envKindsWithDataRoot } from "../../envs/registry.js";
import type { Plan } from "../../plan/schema.js";
import { arlVersion } from "../../plan/version.js";
import { DataRootError, recordedDataRoot } from "../../runtime/data-root.js";
import type { EngineName } from "../../inference/engine/contract.js";
import { EngineModel } from "../../inference/gateway/engine-model.js";
import { engineRoutes } from "../../inference/gateway/engine-routes.js";
import { startGateway } from "../../inference/gateway/server.js";
import { TrainerPolicy } from "../../episode/policy.js";
import { RunError } from "../../runtime/run/context.js";
import { configureTrainer, loadColdStartData, planVocabulary } from "../../runtime/run/provision.js";
import { trainerCommand, trainerDeadlines, TrainerUnavailable } from "../../trainer/launch.js";
import { TrainerClient, TrainerError } from "../../trainer/protocol/client.js";
import { PlanFileError } from "../../plan/files.js";
import { at } from "../../contracts/checked.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError, type CliIO } from "../io.js";
import { selectPlans } from "./run.js";

const usage = `Usage: arl serve PLAN.json | SPEC.arl[#experiment[/variant]] --api vllm|sglang [options]

Serves the plan's policy over HTTP, answering the token-in subset of vLLM's or SGLang's API
(docs/gateway.md#engine-mode): vLLM's /v1/completions with a token-id prompt, or SGLang's
/generate, their health and model routes, and their weight sync (vLLM: /pause, /collective_rpc
reload_weights, /update_weight_version, /resume, /v1/load_lora_adapter; SGLang:
/update_weights_from_disk), which loads a checkpoint the trainer saved. Generations run in the
plan's trainer (the embedded CPU trainer for backend local, the PyTorch trainer for torch);
concurrent ones are batched. When it listens it prints one line on stdout,
'arl serve: listening on http://HOST:PORT', and nothing else; it stops on SIGINT or SIGTERM.

Options:
  --api vllm|sglang       the engine whose API to answer (required)
  --host H                the address to listen on (default: 127.0.0.1)
  --port N                the port (default: 0, a free one; the line above says which)
  --checkpoint DIR        load this checkpoint (a run's checkpoints/<n>, or any directory the
                          trainer's save wrote) before serving; otherwise the plan's model as
                          configured
  --trainer-command CMD   run this program as the trainer (it must speak the trainer protocol)
  --data-root DIR         where the plan's data files are (their words are the embedded model's
                          vocabulary; default: the spec's folder, or the run directory's
                          recorded one for its plan.json)
  --seed S                accepted for engine launch lines; each request's own seed decides

Exit status: 0 stopped by a signal; 1 the plan's trainer could not start, refused the plan or
the checkpoint, or died while serving; 2 a usage error.`;

/** How often the trainer is checked for having died while the server waits for requests. */
const TRAINER_WATCH_MS = 1000;

function apiOf(value: string | undefined): EngineName {
  if (value === "vllm" || value === "sglang") return value;
  throw new UsageError(
    value === undefined
      ? "give the engine API to answer: --api vllm or --api sglang"
      : `--api must be 'vllm' or 'sglang', not '${value}'`,
  );
}

function portOf(value: string | undefined): number {
  if (value === undefined) return 0;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number from 0 to 65535, not '${value}'`);
  return port;
}

/** The one plan to serve: a plan file, or a spec's single (selected) variant. */
function onePlan(target: string, io: CliIO): Plan | number {
  let selected;
  try {
    selected = selectPlans(target, io);
  } catch (error) {
    if (!(error instanceof PlanFileError)) throw error;
    io.stderr(`arl serve: ${error.message}\n`);
    return ExitCode.usage;
  }
  if (selected.errors) return ExitCode.errors;
  if (selected.plans.length !== 1) {
    const names = selected.plans.map((p) => `${p.experiment}/${p.variant}`).join(", ");
    throw new UsageError(
      `'${target}' has ${selected.plans.length} variants (${names}): select one as SPEC.arl#experiment/variant`,
    );
  }
  return at(selected.plans, 0);
}

/** The data root: --data-root, else the one a run directory recorded beside its plan.json, else the target's folder. */
function dataRootOf(target: string, given: string | undefined, io: CliIO): string {
  if (given !== undefined) return path.resolve(io.cwd, given);
  const folder = path.dirname(path.resolve(io.cwd, target));
  try {
    return recordedDataRoot({ dir: folder }) ?? folder;
  } catch (error) {
    if (error instanceof DataRootError) throw new UsageError(error.message);
    throw error;
  }
}

export const serveCommand = defineCommand({
  name: "serve",
  summary: "serve a plan's policy over vLLM's or SGLang's token-in HTTP API",
  usage,
  options: {
    api: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string" },
    checkpoint: { type: "string" },
    "trainer-command": { type: "string" },
    "data-root": { type: "string" },
    seed: { type: "string" },
  },
  async run(parsed, io) {
    const v = parsed.values;
    const api = apiOf(v.api);
    const port = portOf(v.port);
    if (v.seed !== undefined && !/^-?\d+$/.test(v.seed))
      throw new UsageError(`--seed must be an integer, not '${v.seed}'`);
    if (parsed.positionals.length !== 1)
      throw new UsageError("give one plan file or spec (SPEC.arl[#experiment[/variant]])");
    const target = at(parsed.positionals, 0);
    const checkpoint = v.checkpoint === undefined ? undefined : path.resolve(io.cwd, v.checkpoint);
    if (checkpoint !== undefined && !existsSync(checkpoint))
      throw new UsageError(`--checkpoint: no directory '${v.checkpoint}'`);
    const plan = onePlan(target, io);
    if (typeof plan === "number") return plan;
    const dataRoot = dataRootOf(target.split("#")[0] ?? target, v["data-root"], io);
    const fail = (message: string, tail: readonly string[] = []) => {
      io.stderr(
        `arl serve: ${message}\n${tail.length > 0 ? `last lines of the trainer's stderr:\n${tail.map((l) => `  | ${l}`).join("\n")}\n` : ""}`,
      );
      return ExitCode.errors;
    };

    let vocabulary: string[];
    try {
      verifyPlanDataFiles(plan.envs, dataRoot);
      vocabulary = planVocabulary(plan, envKindsWithDataRoot(dataRoot), loadColdStartData(plan, dataRoot));
    } catch (error) {
      if (error instanceof EnvError || error instanceof RunError) return fail(error.message);
      throw error;
    }
    const override = v["trainer-command"]?.split(/\s+/).filter(Boolean);
    let trainer: TrainerClient;
    try {
      trainer = await TrainerClient.start(
        { ...trainerCommand(plan, override), deadlineMs: trainerDeadlines(plan) },
        arlVersion(),
      );
    } catch (error) {
      if (error instanceof TrainerUnavailable) return fail(error.message);
      const e = error as Error & { stderrTail?: string[] };
      return fail(`could not start the trainer: ${e.message}`, e.stderrTail ?? []);
    }

    let closeGateway: (() => Promise<void>) | undefined;
    try {
      const configured = await configureTrainer(trainer, plan, vocabulary, false);
      if (checkpoint !== undefined) await trainer.request("load", { path: checkpoint });
      const tokenizer = configured.tokenizer;
      const model = new EngineModel({
        policy: new TrainerPolicy(trainer),
        trainer,
        modelName: plan.policy.model,
        stopIds: tokenizer.stop_ids && tokenizer.stop_ids.length > 0 ? [...tokenizer.stop_ids] : [tokenizer.eos_id],
        // Both engines label the weights they were launched with "default" until a sync names them.
        weightVersion: "default",
        limits: {
          maxNewTokens: plan.policy.sampling.max_new_tokens,
          maxContext: plan.harness.max_total_tokens ?? configured.model.max_context ?? null,
        },
      });
      const gateway = await startGateway({
        host: v.host,
        port,
        engine: engineRoutes(api, model),
        log: (line) => io.stderr(`${line}\n`),
      });
      closeGateway = () => gateway.close();
      io.stdout(`arl serve: listening on ${gateway.origin}\n`);
      const ended = await untilStopped(trainer);
      if (ended !== null) return fail(ended, trainer.stderrTail());
      return ExitCode.ok;
    } catch (error) {
      if (error instanceof TrainerError || error instanceof RunError) return fail(error.message, error.stderrTail);
      if (
        (error as NodeJS.ErrnoException).code === "EADDRINUSE" ||
        (error as NodeJS.ErrnoException).code === "EADDRNOTAVAIL"
      )
        return fail(`cannot listen on ${v.host}:${port}: ${(error as Error).message}`);
      throw error;
    } finally {
      await closeGateway?.();
      if (trainer.exit === undefined) await trainer.shutdown();
    }
  },
});

/** Resolves on SIGINT or SIGTERM (null), or with a message when the trainer dies first. */
function untilStopped(trainer: TrainerClient): Promise<string | null> {
  return new Promise((resolve) => {
    const done = (result: string | null) => {
      clearInterval(watch);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(result);
    };
    const onSignal = () => done(null);
    const watch = setInterval(() => {
      const exit = trainer.exit;
      if (exit !== undefined)
        done(
          `the trainer ${exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`} while serving`,
        );
    }, TRAINER_WATCH_MS);
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
