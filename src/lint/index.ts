// RL lint rules over the semantic model. (Being filled in: see src/lint/rules/.)
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { SemanticModel } from "../semantics/analyze.js";

export function lint(_model: SemanticModel): Diagnostic[] {
  return [];
}
