// Entry point of the embedded CPU trainer `builtin:tiny` (dist/trainer/embedded/main.js): speaks
// the trainer protocol (PROTOCOL.md) on stdin/stdout. Nothing else may write to stdout, so
// console output goes to stderr before any library is loaded.
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const { serve } = await import("../protocol/server.js");
const { TinyTrainer } = await import("./trainer.js");

const trainer = new TinyTrainer();
await trainer.init();
process.stderr.write(`arl-embedded: builtin:tiny on tfjs ${trainer.backendName}\n`);
await serve({
  handshake: () => trainer.handshake(),
  configure: (p) => trainer.configure(p),
  encode: (p) => ({ ids: trainer.encode(p.messages, p.add_generation_prompt) }),
  decode: (p) => ({ texts: trainer.decode(p.ids) }),
  generate: (p) => trainer.generate(p),
  logprobs: (p) => ({ logprobs: trainer.logprobs(p.ids, p.policy, p.sampling, p.mask ?? null) }),
  values: (p) => ({ values: trainer.values(p.ids) }),
  train_step: (p) => trainer.trainStep(p),
  snapshot: () => trainer.snapshot(),
  save: (p) => trainer.save(p.path),
  load: (p) => trainer.load(p.path),
  eval_op: (p) => ({ output: trainer.evalOp(p.op, p.input) }),
  shutdown: () => ({}),
});
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
process.exit(process.exitCode ?? 0);
