// Entry point of the embedded CPU trainer `builtin:tiny` (dist/trainer/embedded/main.js): speaks
// the trainer protocol (docs/protocol.md) on stdin/stdout. Nothing else may write to stdout, so
// console output goes to stderr before any library is loaded.
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const { serve } = await import("../protocol/server.js");
const { TinyTrainer } = await import("./trainer.js");

const trainer = new TinyTrainer();
await trainer.init();
process.stderr.write(`arl-embedded: builtin:tiny on tfjs ${trainer.backendName}\n`);
await serve(trainer.handlers());
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
process.exit(process.exitCode ?? 0);
