// The inference servers of a run (docs/engines.md, "The pool"). Each generation goes to the live
// server with the fewest requests outstanding (ties: the lowest index). A request that fails in a
// way another attempt may cure (no connection, a reset, a timeout after request_timeout_s, a 5xx,
// an answer the wire cannot read, weights of another version than the server was synced to)
// makes its server suspect and is retried on another, at most max_retries times; the suspect
// server is health-checked meanwhile and rejoins, or is taken out for the rest of the run (dead).
// A generation that finds no server, or runs out of retries, is an env error of its episode;
// the run phases stop the run (resumably) once no server is left (requireServing).
import { EnvError } from "../../contracts/env.js";
import {
  EngineProtocolError,
  type EngineGenerateArgs,
  type EngineGeneration,
  type EngineHttpCall,
  type EngineWire,
} from "./contract.js";
import { callServer, EngineCallError } from "./http.js";

/** How long a health check may take before the server counts as failing it. */
const HEALTH_TIMEOUT_MS = 30_000;

export type ServerState = "live" | "suspect" | "dead";

export class EngineServer {
  /** Generations sent and not answered yet. */
  outstanding = 0;
  state: ServerState = "live";
  /** The last failure, for the messages that name dead servers. */
  lastError: string | undefined;
  /** The policy version whose weights it serves; null before its first sync. */
  version: number | null = null;
  /** The health check of a suspect server. */
  checking: Promise<void> | undefined;
  /** Said once in the run log: its answers name no weight version, so none is checked. */
  unconfirmed = false;
  /** Under LoRA: the versions whose adapters this run loaded into it and has not unloaded. */
  readonly adapters = new Set<number>();
  /** Generations in flight per version of the weights they name. */
  readonly inFlight = new Map<number, number>();

  constructor(
    readonly index: number,
    readonly url: string,
  ) {}

  get name(): string {
    return `server ${this.index} (${this.url})`;
  }
}

export interface PoolOptions {
  readonly requestTimeoutS: number;
  readonly maxRetries: number;
  /** The model the servers serve (the wire names an adapter per version under LoRA). */
  readonly model: string;
  readonly lora: boolean;
  /** Told when a server is taken out. */
  readonly log?: (line: string) => void;
}

/** Counts since the pool started (EngineCounts of the metrics are differences of two). */
export interface PoolCounts {
  /** Generations asked of the pool. */
  readonly requests: number;
  /** Of the attempts, those that repeated a failed one. */
  readonly retries: number;
  /** Servers taken out (dead). */
  readonly failedServers: number;
}

/** A generation with the version of the weights that generated it. */
export interface PooledGeneration extends EngineGeneration {
  readonly version: number;
  readonly server: number;
}

export type GenerateRequest = Omit<EngineGenerateArgs, "model">;

export class EnginePool {
  readonly servers: readonly EngineServer[];
  private requests = 0;
  private retries = 0;

  constructor(
    readonly wire: EngineWire,
    urls: readonly string[],
    private readonly options: PoolOptions,
  ) {
    this.servers = urls.map((url, i) => new EngineServer(i, url));
  }

  get counts(): PoolCounts {
    return {
      requests: this.requests,
      retries: this.retries,
      failedServers: this.servers.filter((s) => s.state === "dead").length,
    };
  }

  /** Servers that take requests and weight syncs (suspect ones are live until their check says otherwise). */
  live(): EngineServer[] {
    return this.servers.filter((s) => s.state !== "dead");
  }

  /** The servers taken out and why, for the message of a run that has none left. */
  deadSummary(): string {
    return this.servers
      .filter((s) => s.state === "dead")
      .map((s) => `${s.name}: ${s.lastError ?? "?"}`)
      .join("; ");
  }

  /** Takes `server` out for the rest of the run. */
  markDead(server: EngineServer, reason: string): void {
    if (server.state === "dead") return;
    server.state = "dead";
    server.lastError = reason;
    this.options.log?.(`inference ${server.name} taken out: ${reason}`);
  }

  /** Waits for the health checks in progress, so that every server is live or dead. */
  async settle(): Promise<void> {
    await Promise.all(this.servers.flatMap((s) => (s.checking ? [s.checking] : [])));
  }

  /** Whether the server answers its health call now. */
  async healthy(server: EngineServer): Promise<{ ok: true } | { ok: false; error: string }> {
    try {
      await callServer(server.url, this.wire.health(), HEALTH_TIMEOUT_MS);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: (error as Error).message };
    }
  }

  /** One call to one server with the request deadline (weight syncs pass their own). */
  call(server: EngineServer, call: EngineHttpCall, timeoutMs = this.options.requestTimeoutS * 1000): Promise<unknown> {
    return callServer(server.url, call, timeoutMs);
  }

  /**
   * Generates on the least busy live server, retrying a failed attempt on another. Throws an
   * EnvError (the episode's env error) when no server is left, when the retries are spent, or
   * when a server refuses the request itself (a 4xx, which every server would repeat).
   */
  async generate(request: GenerateRequest): Promise<PooledGeneration> {
    this.requests++;
    const tried = new Set<EngineServer>();
    const failures: string[] = [];
    for (let attempt = 0; ; attempt++) {
      const server = await this.pick(tried);
      if (!server)
        throw new EnvError(`no inference server is left: ${this.deadSummary() || "none was given"}`, "unavailable");
      if (attempt > 0) this.retries++;
      tried.add(server);
      const outcome = await this.attempt(server, request);
      if ("generation" in outcome) return outcome.generation;
      if (!outcome.retryable)
        throw new EnvError(`inference ${server.name} refused the generation: ${outcome.error}`, "protocol");
      failures.push(`${server.name}: ${outcome.error}`);
      this.suspect(server, outcome.error);
      if (attempt >= this.options.maxRetries) {
        throw new EnvError(
          `the generation failed ${attempt + 1} time${attempt === 0 ? "" : "s"} (resources.rollout.max_retries ${this.options.maxRetries}): ${failures.join("; ")}`,
          "unavailable",
        );
      }
    }
  }

  /**
   * Under LoRA, unloads every adapter of `server` that no generation needs any more: all but the
   * one it serves now and those that generations in flight name (asynchronous rollout: they keep
   * the version they started with). A server keeps each adapter it loaded until told otherwise.
   * A failed unload is logged; the server still serves the right version, so it stays in.
   */
  async retireAdapters(server: EngineServer): Promise<void> {
    if (!this.options.lora || server.state === "dead") return;
    const idle = [...server.adapters].filter((v) => v !== server.version && (server.inFlight.get(v) ?? 0) === 0);
    await Promise.all(
      idle.map(async (version) => {
        server.adapters.delete(version);
        try {
          await this.call(server, this.wire.unloadAdapter(version));
        } catch (error) {
          this.options.log?.(
            `inference ${server.name} did not unload the LoRA adapter of policy version ${version} (it stays loaded there): ${(error as Error).message}`,
          );
        }
      }),
    );
  }

  private async attempt(
    server: EngineServer,
    request: GenerateRequest,
  ): Promise<{ generation: PooledGeneration } | { error: string; retryable: boolean }> {
    const version = server.version;
    if (version !== null) server.inFlight.set(version, (server.inFlight.get(version) ?? 0) + 1);
    try {
      if (version === null) return { error: "it has not been synced to the trainer's weights", retryable: true };
      const model = this.wire.servedModel(this.options.model, version, { lora: this.options.lora });
      const args = { ...request, model };
      const answer = await this.call(server, this.wire.generate(args));
      const generation = this.wire.parseGeneration(answer, args);
      if (generation.ids.length !== generation.logprobs.length) {
        return {
          error: `its answer has ${generation.ids.length} token ids but ${generation.logprobs.length} log-probs`,
          retryable: true,
        };
      }
      if (generation.ids.length > request.maxNewTokens)
        return {
          error: `it generated ${generation.ids.length} tokens, above the ${request.maxNewTokens} asked for`,
          retryable: true,
        };
      // Never train on weights other than those the sample is recorded with.
      if (generation.weightVersion !== null && generation.weightVersion !== String(version)) {
        return {
          error: `it served weight version '${generation.weightVersion}' after being synced to version ${version}`,
          retryable: true,
        };
      }
      if (generation.weightVersion === null && !server.unconfirmed) {
        server.unconfirmed = true;
        this.options.log?.(
          `inference ${server.name} does not say which weights served its generations (no weight version in its answers; vLLM reports them from 0.33.0): they are recorded with the version ARL synced it to (${version}), unconfirmed by the engine`,
        );
      }
      return { generation: { ...generation, version, server: server.index } };
    } catch (error) {
      if (error instanceof EngineCallError) return { error: error.message, retryable: error.retryable };
      if (error instanceof EngineProtocolError)
        return { error: `its answer is unreadable: ${error.message}`, retryable: true };
      throw error;
    } finally {
      server.outstanding--;
      if (version !== null) this.release(server, version);
    }
  }

  /** A generation naming `version` is done: the last one of a version no longer served lets its adapter go. */
  private release(server: EngineServer, version: number): void {
    const left = (server.inFlight.get(version) ?? 1) - 1;
    if (left > 0) server.inFlight.set(version, left);
    else server.inFlight.delete(version);
    if (left <= 0 && version !== server.version && server.adapters.has(version)) void this.retireAdapters(server);
  }

  /**
   * The live server for the next attempt: the fewest outstanding (lowest index on ties), one not
   * tried yet for this generation where there is one, its request counted as outstanding. With
   * only suspect servers left, waits for their health checks.
   */
  private async pick(tried: ReadonlySet<EngineServer>): Promise<EngineServer | undefined> {
    for (;;) {
      const live = this.servers.filter((s) => s.state === "live");
      const fresh = live.filter((s) => !tried.has(s));
      const candidates = fresh.length > 0 ? fresh : live;
      if (candidates.length > 0) {
        // Counted at once: the requests of the same tick must see it.
        const chosen = candidates.reduce((best, s) => (s.outstanding < best.outstanding ? s : best));
        chosen.outstanding++;
        return chosen;
      }
      const checks = this.servers.flatMap((s) => (s.state === "suspect" && s.checking ? [s.checking] : []));
      if (checks.length === 0) return undefined;
      await Promise.race(checks);
    }
  }

  /** A failed attempt: the server takes no request until its health check passes; a failed check takes it out. */
  private suspect(server: EngineServer, reason: string): void {
    server.lastError = reason;
    if (server.state !== "live") return;
    server.state = "suspect";
    server.checking = this.healthy(server).then((health) => {
      server.checking = undefined;
      if (server.state !== "suspect") return;
      if (health.ok) server.state = "live";
      else this.markDead(server, `${reason}; then its health check failed: ${health.error}`);
    });
  }
}
