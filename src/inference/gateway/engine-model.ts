// The model half of the gateway in engine mode (docs/gateway.md#engine-mode): one set of weights
// in a trainer process, generations from many clients at once (TrainerPolicy gathers the
// concurrent ones into one generate request), and the weight sync of an inference engine:
// pause, drain what is in flight, `load` a checkpoint through the trainer protocol, label the
// new weights with a version, resume. Each generation carries the version that served it: a
// load never starts while a generation runs, and none starts while a load runs.
import type { GenerateOptions, Generation, Policy, TrainerRequests } from "../../episode/policy.js";

/**
 * How `pause` treats generations, as vLLM's `POST /pause?mode=`: `wait` refuses new ones (503)
 * until resume and waits for those in flight; `keep` holds new ones until resume. vLLM's
 * `abort` (cut the ones in flight) has no counterpart: a trainer's generate request runs whole.
 */
export type PauseMode = "wait" | "keep";

/** A generation and the label of the weights that produced it. */
export interface ServedGeneration extends Generation {
  readonly weightVersion: string;
}

/** Why the engine model refused a call; the routes answer it in the engine's error shape. */
export class EngineModelError extends Error {
  override readonly name = "EngineModelError";
  constructor(
    readonly status: 400 | 404 | 503,
    message: string,
    /** The request field it is about, where there is one. */
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/**
 * What one generation may ask for, so that no request holds the trainer unboundedly (generation
 * runs whole in the trainer, and concurrent requests wait for it): `maxNewTokens`, the plan's
 * policy.sampling.max_new_tokens; `maxContext`, the most tokens of a sequence, prompt and
 * generated (harness.max_total_tokens, else the model's context from configure; null: none known).
 */
export interface ServingLimits {
  readonly maxNewTokens: number;
  readonly maxContext: number | null;
}

/** The request fields a refusal of `bound` names, in the engine's wire. */
export interface LengthFields {
  readonly prompt: string;
  readonly maxTokens: string;
}

export interface EngineModelOptions {
  readonly policy: Policy;
  /** The trainer behind `policy`: weight loads go to it. */
  readonly trainer: TrainerRequests;
  /** The name the server serves its base weights under (`GET /v1/models`). */
  readonly modelName: string;
  /** The tokenizer's stop ids (configure's `stop_ids`, else its EOS): every generation stops on them. */
  readonly stopIds: readonly number[];
  /** The label of the weights the trainer holds at the start (its policy version as text). */
  readonly weightVersion: string;
  readonly limits: ServingLimits;
}

export class EngineModel {
  readonly modelName: string;
  readonly stopIds: readonly number[];
  readonly limits: ServingLimits;
  private version: string;
  /** The adapter loaded last (vLLM's `lora_name`), whose name generations then give. */
  private adapter: string | null = null;
  private paused: PauseMode | null = null;
  private loading = false;
  private inFlight = 0;
  /** Resolved when a pause ends or a load finishes: held generations look again. */
  private gate: { promise: Promise<void>; open: () => void } = openGate();
  /** Resolved whenever the last generation in flight ends. */
  private idle: { promise: Promise<void>; open: () => void } = openGate();
  private readonly policy: Policy;
  private readonly trainer: TrainerRequests;

  constructor(options: EngineModelOptions) {
    this.policy = options.policy;
    this.trainer = options.trainer;
    this.modelName = options.modelName;
    this.stopIds = options.stopIds;
    this.version = options.weightVersion;
    this.limits = options.limits;
  }

  get weightVersion(): string {
    return this.version;
  }

  get isPaused(): boolean {
    return this.paused !== null;
  }

  /** The names a generation may give: the base model, or the adapter loaded last. */
  get servedNames(): readonly string[] {
    return this.adapter === null ? [this.modelName] : [this.adapter];
  }

  /** Refuses a `model` this server does not serve (404, as the engines answer). */
  checkModel(name: string | null | undefined): void {
    if (name === null || name === undefined || this.servedNames.includes(name)) return;
    const why =
      this.adapter !== null && name === this.modelName
        ? `: adapter '${this.adapter}' replaced its weights (this server holds one set of weights; name the adapter)`
        : "";
    throw new EngineModelError(
      404,
      `The model \`${name}\` does not exist${why}; this server serves ${this.servedNames.join(", ")}`,
      "model",
    );
  }

  /**
   * The tokens to generate for a prompt of `promptLength` asking for `requested` (absent: the
   * engine's default `fallback`, cut to what the limits leave). A request past the limits is
   * refused with a 400 naming the field, as vLLM refuses one past its max_model_len.
   */
  bound(promptLength: number, requested: number | null | undefined, fallback: number, fields: LengthFields): number {
    const { maxNewTokens, maxContext } = this.limits;
    if (requested !== null && requested !== undefined && requested > maxNewTokens) {
      throw new EngineModelError(
        400,
        `${fields.maxTokens} is ${requested}, more than this server generates for one request (${maxNewTokens}, the plan's policy.sampling.max_new_tokens): ask for at most ${maxNewTokens}`,
        fields.maxTokens,
      );
    }
    if (maxContext === null) return requested ?? Math.min(fallback, maxNewTokens);
    if (promptLength >= maxContext) {
      throw new EngineModelError(
        400,
        `This model's maximum context length is ${maxContext} tokens, and the prompt has ${promptLength}, which leaves none to generate: shorten the prompt`,
        fields.prompt,
      );
    }
    const room = maxContext - promptLength;
    if (requested === null || requested === undefined) return Math.min(fallback, maxNewTokens, room);
    if (requested > room) {
      throw new EngineModelError(
        400,
        `This model's maximum context length is ${maxContext} tokens; the request has ${promptLength} prompt tokens and asks for ${requested} more (${fields.maxTokens}): ask for at most ${room} or shorten the prompt`,
        fields.maxTokens,
      );
    }
    return requested;
  }

  /** One generation from the weights held now: refused (503) while paused with `wait`, held while paused with `keep` or while a load runs. */
  async generate(prompt: Int32Array, options: GenerateOptions): Promise<ServedGeneration> {
    if (this.paused === "wait")
      throw new EngineModelError(503, "generation is paused for a weight update: retry after /resume");
    while (this.paused === "keep" || this.loading) await this.gate.promise;
    const version = this.version;
    this.inFlight++;
    try {
      const generation = await this.policy.generate(prompt, options);
      return { ...generation, weightVersion: version };
    } catch (error) {
      throw clientError(error) ?? error;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) {
        this.idle.open();
        this.idle = openGate();
      }
    }
  }

  async decode(ids: Int32Array): Promise<string> {
    return this.policy.decode(ids);
  }

  async decodeEach(ids: Int32Array): Promise<string[]> {
    return this.policy.decodeEach
      ? this.policy.decodeEach(ids)
      : Promise.all(Array.from(ids, (id) => this.policy.decode(Int32Array.of(id))));
  }

  /** Stops new generations as `mode` says and, with `wait`, returns once those in flight have ended. */
  async pause(mode: PauseMode): Promise<void> {
    this.paused = mode;
    if (mode === "wait") await this.drain();
  }

  resume(): void {
    this.paused = null;
    this.release();
  }

  /**
   * Makes the trainer serve the checkpoint in `dir` (its `save`: model.safetensors, or the PEFT
   * adapter under policy.lora) and labels it `version`, else the policy version the checkpoint
   * holds. Generations that arrive meanwhile wait; those in flight finish on the old weights.
   * `adapter`: the name generations give from now on (vLLM's load_lora_adapter).
   */
  async load(dir: string, version: string | null, adapter: string | null = null): Promise<string> {
    while (this.loading) await this.gate.promise;
    this.loading = true;
    try {
      await this.drain();
      const loaded = await this.trainer.request("load", { path: dir }).catch((error: unknown) => {
        throw clientError(error) ?? error;
      });
      this.version = version ?? String(loaded.policy_version);
      if (adapter !== null) this.adapter = adapter;
      return this.version;
    } finally {
      this.loading = false;
      this.release();
    }
  }

  /** Relabels the weights being served (vLLM's update_weight_version). */
  setVersion(version: string): void {
    this.version = version;
  }

  private async drain(): Promise<void> {
    while (this.inFlight > 0) await this.idle.promise;
  }

  private release(): void {
    this.gate.open();
    this.gate = openGate();
  }
}

function openGate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A trainer's `invalid_request` answer (a prompt too long, a checkpoint it cannot read) is the client's error (400). */
function clientError(error: unknown): EngineModelError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "invalid_request") return undefined;
  return new EngineModelError(400, `the trainer refused the request: ${(error as Error).message}`);
}
