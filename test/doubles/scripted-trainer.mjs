#!/usr/bin/env node
// A protocol double with a scripted policy for orchestration tests (never a user backend):
// character-level tokens (id = code point, eos = 0); the "model" is one number `skill`, the
// probability of calling `step` rather than `noop`; a train step moves it by the mean advantage
// of the turns that called `step`. Deterministic for given request seeds.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serve } from "../../dist/trainer/protocol/server.js";

let skill = Number(process.env.DOUBLE_SKILL ?? 0.3);
let version = 0;
const EOS = 0;
const enc = (s) => Array.from(s, (c) => c.codePointAt(0));
const STEP = '<tool_call>{"name":"step","arguments":{}}</tool_call>';
const NOOP = '<tool_call>{"name":"noop","arguments":{}}</tool_call>';
const rows = (r) => Array.from({ length: r.offsets.length - 1 }, (_, i) => r.values.subarray(r.offsets[i], r.offsets[i + 1]));
const pack = (seqs, Ctor) => {
  const offsets = new Int32Array(seqs.length + 1);
  seqs.forEach((s, i) => (offsets[i + 1] = offsets[i] + s.length));
  const values = new Ctor(offsets[seqs.length]);
  seqs.forEach((s, i) => values.set(s, offsets[i]));
  return { values, offsets };
};
function rand(seed) {
  let t = (seed >>> 0) + 0x6d2b79f5;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

await serve({
  handshake: () => ({
    protocol: "arl-trainer",
    version: 1,
    trainer: { name: "scripted-double", version: "0" },
    capabilities: { methods: ["configure", "encode", "decode", "generate", "logprobs", "values", "train_step", "save", "load", "shutdown"], reductions: ["token_mean"], kl_estimators: [], value_head: true, keep_sampling_mask: true, world_size: 1, device: "cpu" },
    versions: { node: process.version },
  }),
  configure: () => ({ model: { name: "scripted", parameters: 1 }, tokenizer: { vocab_size: 0x110000, bos_id: 1, eos_id: EOS, pad_id: 2 }, policy_version: version }),
  encode: (p) => ({ ids: pack(p.messages.map((m) => Int32Array.from(enc(`<${m.role}>${m.content}`))), Int32Array) }),
  decode: (p) => ({ texts: rows(p.ids).map((r) => String.fromCodePoint(...Array.from(r).filter((x) => x !== EOS))) }),
  generate: (p) => {
    const outs = rows(p.prompts).map((_, i) => {
      const step = rand(p.seeds[i]) < skill;
      const ids = Int32Array.from([...enc(step ? STEP : NOOP), EOS]);
      const lp = new Float32Array(ids.length);
      lp[0] = Math.log(step ? skill : 1 - skill);
      return { ids, lp };
    });
    return { ids: pack(outs.map((o) => o.ids), Int32Array), logprobs: pack(outs.map((o) => o.lp), Float32Array), finish: outs.map(() => "stop"), policy_version: version };
  },
  logprobs: (p) => ({ logprobs: pack(rows(p.ids).map((r) => new Float32Array(r.length)), Float32Array) }),
  values: (p) => ({ values: pack(rows(p.ids).map((r) => new Float32Array(r.length)), Float32Array) }),
  train_step: (p) => {
    const ids = rows(p.ids);
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
    return { loss: -delta, policy_loss: -delta, kl: 0, entropy: 0.5, clip_fraction: 0, ratio_mean: 1, ratio_min: 1, ratio_max: 1, grad_norm: Math.abs(delta), tokens: p.denominators.tokens, policy_version: version };
  },
  save: (p) => {
    mkdirSync(path.dirname(p.path), { recursive: true });
    const tmp = `${p.path}.tmp`;
    mkdirSync(tmp, { recursive: true });
    writeFileSync(path.join(tmp, "trainer.json"), JSON.stringify({ skill, version }));
    renameSync(tmp, p.path);
    return { files: ["trainer.json"], policy_version: version };
  },
  load: (p) => {
    const s = JSON.parse(readFileSync(path.join(p.path, "trainer.json"), "utf8"));
    skill = s.skill;
    version = s.version;
    return { files: ["trainer.json"], policy_version: version };
  },
  shutdown: () => ({}),
});
