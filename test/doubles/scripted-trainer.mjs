#!/usr/bin/env node
// A protocol double with a scripted policy for orchestration tests (never a user backend):
// character-level tokens (id = code point, eos = 0); the "model" is one number `skill`, the
// probability of calling `step` rather than `noop`; a train step moves it by the mean advantage
// of the turns that called `step`. Deterministic for given request seeds.
// Asynchronous rollout: `snapshot` freezes (skill, version) as the behaviour policy, which
// `generate` with policy "behaviour" samples from; DOUBLE_NO_BEHAVIOUR=1 leaves the capability
// out (the runtime must refuse rollout.async). A model named "scripted:skill=X" (a cross-policy
// pool entry) starts at skill X; one named "scripted:crash-on-generate" dies in its first
// generate, with a last word on stderr. DOUBLE_TRAIN_LOG=FILE appends each train_step's ids and loss
// mask as a JSON line; DOUBLE_TRAIN_MS=N makes each train_step take N ms (accelerator time, for
// the async benchmark). `logprobs` reproduces what `generate` reported (DOUBLE_SHIFTED_LOGPROBS=1:
// one position early). DOUBLE_ENGINE_GAP=X fakes an inference engine's numerics: `generate`
// reports each turn's choice token X nats less likely than `logprobs` recomputes it (the
// train/inference mismatch, docs/semantics.md §12); the train log then records is_weights.
// DOUBLE_NO_IS_WEIGHTS=1 leaves that capability out (the runtime must refuse mask.tis).
// DOUBLE_ON_POLICY=1 announces on_policy_step: train_step takes
// old_logprobs null and reports nll 0.25; the train log then also gets a line per logprobs request.
// The scripted policy has no optimizer state: reset_optimizer changes nothing;
// DOUBLE_NO_RESET_OPTIMIZER=1 leaves the method out (the runtime must refuse rollout.sft.optimizer fresh).
import { appendFileSync } from "node:fs";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { mulberry32 } from "../../dist/contracts/random.js";
import { RequestError, serve } from "../../dist/trainer/protocol/server.js";

let skill = Number(process.env.DOUBLE_SKILL ?? 0.3);
let version = 0;
/** The behaviour snapshot: { skill, version }, or null before the first `snapshot`. */
let behaviour = null;
let crashOnGenerate = false;
const withBehaviour = process.env.DOUBLE_NO_BEHAVIOUR !== "1";
const withReset = process.env.DOUBLE_NO_RESET_OPTIMIZER !== "1";
const onPolicy = process.env.DOUBLE_ON_POLICY === "1";
const EOS = 0;
const enc = (s) => Array.from(s, (c) => c.codePointAt(0));
const STEP = '<tool_call>{"name":"step","arguments":{}}</tool_call>';
const NOOP = '<tool_call>{"name":"noop","arguments":{}}</tool_call>';
const rows = (r) =>
  Array.from({ length: r.offsets.length - 1 }, (_, i) => r.values.subarray(r.offsets[i], r.offsets[i + 1]));
const pack = (seqs, Ctor) => {
  const offsets = new Int32Array(seqs.length + 1);
  seqs.forEach((s, i) => (offsets[i + 1] = offsets[i] + s.length));
  const values = new Ctor(offsets[seqs.length]);
  seqs.forEach((s, i) => values.set(s, offsets[i]));
  return { values, offsets };
};
/** One uniform draw per request seed: the first output of that seed's mulberry32 stream. */
const rand = (seed) => mulberry32(seed)();

await serve({
  handshake: () => ({
    protocol: "arl-trainer",
    version: 1,
    trainer: { name: "scripted-double", version: "0" },
    capabilities: {
      methods: [
        "configure",
        "encode",
        "decode",
        "generate",
        "logprobs",
        "values",
        "train_step",
        ...(withBehaviour ? ["snapshot"] : []),
        ...(withReset ? ["reset_optimizer"] : []),
        "save",
        "load",
        "shutdown",
      ],
      reductions: ["token_mean"],
      kl_estimators: [],
      value_head: true,
      keep_sampling_mask: true,
      world_size: 1,
      device: "cpu",
      ...(withBehaviour ? { behaviour_policy: true } : {}),
      ...(process.env.DOUBLE_NO_IS_WEIGHTS === "1" ? {} : { is_weights: true }),
      ...(onPolicy ? { on_policy_step: true } : {}),
    },
    versions: { node: process.version },
  }),
  configure: (p) => {
    const named = /^scripted:skill=([0-9.]+)$/.exec(p.policy?.model ?? "");
    if (named) skill = Number(named[1]);
    crashOnGenerate = p.policy?.model === "scripted:crash-on-generate";
    // DOUBLE_TEMPLATE: the chat template facts to report (JSON), as a trainer with a real template does.
    // DOUBLE_STOP_IDS: the end-of-turn ids to report (JSON); a generated turn then ends with the last one.
    const template = process.env.DOUBLE_TEMPLATE ? { template: JSON.parse(process.env.DOUBLE_TEMPLATE) } : {};
    const stops = process.env.DOUBLE_STOP_IDS ? { stop_ids: JSON.parse(process.env.DOUBLE_STOP_IDS) } : {};
    return {
      model: { name: named ? p.policy.model : "scripted", parameters: 1 },
      tokenizer: { vocab_size: 0x110000, bos_id: 1, eos_id: EOS, pad_id: 2, ...template, ...stops },
      policy_version: version,
    };
  },
  encode: (p) => ({
    ids: pack(
      p.messages.map((m) => Int32Array.from(enc(`<${m.role}>${m.content}`))),
      Int32Array,
    ),
  }),
  decode: (p) => ({ texts: rows(p.ids).map((r) => String.fromCodePoint(...Array.from(r).filter((x) => x !== EOS))) }),
  snapshot: () => {
    behaviour = { skill, version };
    return { policy_version: version };
  },
  generate: (p) => {
    if (crashOnGenerate) {
      process.stderr.write("double: pool model lost its GPU (simulated)\n");
      process.exit(4);
    }
    if (p.policy === "behaviour" && !behaviour)
      throw new RequestError("invalid_request", "no behaviour policy: send 'snapshot' first");
    const from = p.policy === "behaviour" ? behaviour : { skill, version };
    const outs = rows(p.prompts).map((_, i) => {
      const step = rand(p.seeds[i]) < from.skill;
      const ids = Int32Array.from([
        ...enc(step ? STEP : NOOP),
        process.env.DOUBLE_STOP_IDS ? p.stop_ids[p.stop_ids.length - 1] : EOS,
      ]);
      const lp = new Float32Array(ids.length);
      lp[0] = Math.log(step ? from.skill : 1 - from.skill) - Number(process.env.DOUBLE_ENGINE_GAP ?? 0);
      return { ids, lp };
    });
    return {
      ids: pack(
        outs.map((o) => o.ids),
        Int32Array,
      ),
      logprobs: pack(
        outs.map((o) => o.lp),
        Float32Array,
      ),
      finish: outs.map(() => "stop"),
      policy_version: from.version,
    };
  },
  // The log-probs generate reported: the choice sits on the first token of a STEP or NOOP turn,
  // the rest of a turn is certain. DOUBLE_SHIFTED_LOGPROBS=1 returns them one position early
  // (the logits at k read as token k's: the classic token shift the preflight must catch).
  logprobs: (p) => {
    if (p.policy === "behaviour" && !behaviour)
      throw new RequestError("invalid_request", "no behaviour policy: send 'snapshot' first");
    const s = p.policy === "behaviour" ? behaviour.skill : skill;
    const shift = process.env.DOUBLE_SHIFTED_LOGPROBS === "1" ? 1 : 0;
    if (onPolicy && process.env.DOUBLE_TRAIN_LOG)
      appendFileSync(process.env.DOUBLE_TRAIN_LOG, `${JSON.stringify({ logprobs: p.ids.offsets.length - 1 })}\n`);
    return {
      logprobs: pack(
        rows(p.ids).map((r) => {
          const out = new Float32Array(r.length);
          for (let k = 1; k < r.length; k++) {
            const text = String.fromCodePoint(...r.subarray(k, k + STEP.length));
            const lp = text === STEP ? Math.log(s) : text === NOOP ? Math.log(1 - s) : 0;
            if (k - shift >= 1) out[k - shift] = lp;
          }
          return out;
        }),
        Float32Array,
      ),
    };
  },
  values: (p) => ({
    values: pack(
      rows(p.ids).map((r) => new Float32Array(r.length)),
      Float32Array,
    ),
  }),
  train_step: async (p) => {
    const ids = rows(p.ids);
    if (process.env.DOUBLE_TRAIN_LOG)
      appendFileSync(
        process.env.DOUBLE_TRAIN_LOG,
        `${JSON.stringify({ ids: ids.map((r) => Array.from(r)), loss_mask: rows(p.loss_mask).map((r) => Array.from(r)), ...(p.is_weights ? { is_weights: rows(p.is_weights).map((r) => Array.from(r)) } : {}), old_logprobs: p.old_logprobs === null ? null : "sent" })}\n`,
      );
    if (process.env.DOUBLE_TRAIN_MS) await new Promise((r) => setTimeout(r, Number(process.env.DOUBLE_TRAIN_MS)));
    const adv = rows(p.advantages);
    const mask = rows(p.loss_mask);
    let sum = 0;
    let n = 0;
    ids.forEach((seq, i) => {
      for (let k = 1; k < seq.length; k++) {
        // The first generated token of each turn decides the action: '<' then 't'... use the name's first letter.
        if (mask[i][k] && !mask[i][k - 1]) {
          const text = String.fromCodePoint(...seq.subarray(k, k + 30));
          const sign = text.includes('"step"') ? 1 : -1;
          sum += sign * adv[i][k];
          n++;
        }
      }
    });
    const delta = n ? (0.5 * sum) / n : 0;
    skill = Math.min(0.95, Math.max(0.05, skill + delta));
    version++;
    return {
      loss: -delta,
      policy_loss: -delta,
      kl: 0,
      entropy: 0.5,
      clip_fraction: 0,
      ratio_mean: 1,
      ratio_min: 1,
      ratio_max: 1,
      grad_norm: Math.abs(delta),
      ...(onPolicy ? { nll: 0.25 } : {}),
      tokens: p.denominators.tokens,
      policy_version: version,
    };
  },
  ...(withReset ? { reset_optimizer: () => ({ step: 0 }) } : {}),
  save: (p) => {
    mkdirSync(path.dirname(p.path), { recursive: true });
    const tmp = `${p.path}.tmp`;
    mkdirSync(tmp, { recursive: true });
    writeFileSync(path.join(tmp, "trainer.json"), JSON.stringify({ skill, version, behaviour }));
    renameSync(tmp, p.path);
    return { files: ["trainer.json"], policy_version: version };
  },
  load: (p) => {
    const s = JSON.parse(readFileSync(path.join(p.path, "trainer.json"), "utf8"));
    skill = s.skill;
    version = s.version;
    behaviour = s.behaviour ?? null;
    return { files: ["trainer.json"], policy_version: version };
  },
  shutdown: () => ({}),
});
