// The reference RL math (docs/semantics.md), one module per formula family.
export * from "./advantages.js";
export * from "./eval.js";
export * from "./gae.js";
export * from "./kl.js";
export * from "./lag.js";
export * from "./mismatch.js";
export * from "./policy-loss.js";
export * from "./registry.js";
export * from "./sampling.js";
