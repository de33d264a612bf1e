// Conformance vectors: the shared test format that the reference and every trainer must pass.
export * from "./backend.js";
export * from "./compare.js";
export * from "../contracts/conformance-ops.js";
export * from "./run.js";
export * from "./vectors.js";
