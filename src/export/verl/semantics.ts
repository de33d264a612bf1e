// SEMANTICS.md: every ARL setting whose veRL counterpart means something else, or that has none,
// with the ARL value, what veRL does, the consequence and what the export did about it.
import type { Plan } from "../../plan/schema.js";
import type { Finding, Handling } from "./findings.js";

const HANDLED: Record<Handling, string> = {
  exact: "mapped exactly",
  differs: "mapped, differs (warning)",
  refused: "no safe mapping: refused",
};

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

export function semanticsReport(plan: Plan, findings: readonly Finding[], allowApproximate: boolean): string {
  const order: Handling[] = ["refused", "differs", "exact"];
  const sorted = [...findings].sort(
    (a, b) => order.indexOf(a.handling) - order.indexOf(b.handling) || a.setting.localeCompare(b.setting),
  );
  const refusedNote = allowApproximate
    ? "exported anyway with the closest veRL setting (--allow-approximate)"
    : HANDLED.refused;
  const rows = sorted.map(
    (f) =>
      `| \`${cell(f.setting)}\` | ${cell(f.arl)} | ${cell(f.verl)} | ${cell(f.consequence)} | ${f.handling === "refused" ? refusedNote : HANDLED[f.handling]} |`,
  );
  const counts = order.map((h) => `${sorted.filter((f) => f.handling === h).length} ${h}`).join(", ");
  return `# ${plan.experiment}/${plan.variant} on veRL 0.9.1: semantic differences

Plan ${plan.hash}. ${counts}. Checked against veRL's own config loader and dataclasses
(Hydra compose over verl/trainer/config, omega_conf_to_dataclass, validate_config); no veRL
training run was made. Settings not listed map to the veRL setting of the same meaning.

| ARL setting | ARL value | veRL | consequence | export |
|---|---|---|---|---|
${rows.join("\n")}
`;
}
