// Go to definition: an import's file, the declaration an `extends` names, and names in values:
// envs (`code`), their tools (`code.run_tests`, declared in the env's own file through
// `extends`), signals (`outcome.tests_passed`, `quest.success`) and declared tools.
import type { Location } from "vscode-languageserver/node";
import { toLspRange } from "./convert.js";
import { locate } from "./locate.js";
import { envsInScope, resolveDeclaration } from "./resolve.js";
import type { Snapshot } from "./workspace.js";
import { declarationNameRange } from "../semantics/declarations.js";
import type { Origin } from "../semantics/values.js";

export function definition(snapshot: Snapshot, offset: number): Location[] {
  const module = snapshot.entry;
  if (!module) return [];
  const hit = locate(module.parsed.document, offset);
  if (!hit) return [];
  const uriOf = (f: string) => snapshot.workspace.uriOf(f);
  const at = (o: Origin): Location => ({ uri: uriOf(o.file), range: toLspRange(o.range) });
  const start = { line: 0, character: 0 };
  switch (hit.kind) {
    case "importPath":
    case "importAlias": {
      const target = module.imports.find((i) => i.decl === hit.decl)?.target;
      return target ? [{ uri: uriOf(target), range: { start, end: start } }] : [];
    }
    case "extends": {
      const decl = resolveDeclaration(
        snapshot,
        module,
        hit.ref.parts.map((p) => p.name),
      );
      return decl ? [at({ file: decl.module.path, range: declarationNameRange(decl) })] : [];
    }
    case "name": {
      const [head, second] = hit.parts;
      const envs = envsInScope(snapshot, { topType: hit.top.type.name, topName: hit.top.name?.name });
      if (hit.parts.length === 2 && (head === "outcome" || head === "state" || head === "env")) {
        const origins = envs.flatMap((e) =>
          e.signals
            .filter((s) => s.name === second && (head === "env" || s.scope === head))
            .flatMap((s) => (s.origin ? [s.origin] : [])),
        );
        if (origins.length > 0) return origins.map(at);
      }
      const env = envs.find((e) => e.name === head);
      if (env) {
        if (hit.parts.length === 1 || hit.index === 0 || second === "tools") return env.origin ? [at(env.origin)] : [];
        const target =
          env.tools.find((t) => t.name === second)?.origin ?? env.signals.find((s) => s.name === second)?.origin;
        return target ? [at(target)] : [];
      }
      if (hit.parts.length === 2 && hit.index === 0 && head !== undefined) {
        const target = snapshot.index.importedModule(module, head);
        if (target) return [{ uri: uriOf(target.path), range: { start, end: start } }];
      }
      const decl = resolveDeclaration(snapshot, module, hit.parts);
      return decl ? [at({ file: decl.module.path, range: declarationNameRange(decl) })] : [];
    }
    default:
      return [];
  }
}
