// The package's public API for tools built on arl (the CLI and the language server use the same).
export { Compiler, type CheckResult } from "./compiler.js";
export type { Diagnostic, Severity } from "./diagnostics/diagnostic.js";
export { parse, type ParseResult } from "./language/parse.js";
export type * as ast from "./language/ast.js";
export { lowerModel, type LoweredPlan } from "./plan/lower.js";
export { planSchema, planJsonSchema, type Plan } from "./plan/schema.js";
export { planHash } from "./plan/hash.js";
export { canonicalize } from "./plan/canonical.js";
export { executePlan, type RunOptions, type RunSummary } from "./runtime/orchestrator.js";
export { PROTOCOL_NAME, PROTOCOL_VERSION } from "./contracts/trainer-protocol.js";
