// The table `arl run` ends with: held-out pass@k at each evaluation (with its 95% bootstrap
// interval over tasks), training success and reward, and where the time went.
import { at, last } from "../contracts/checked.js";

function fmt(x: unknown, digits = 3): string {
  return typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : "-";
}

export function runSummary(metrics: readonly Record<string, unknown>[]): string {
  if (metrics.length === 0) return "no iteration was completed\n";
  const isObject = (x: unknown): x is Record<string, number> => typeof x === "object" && x !== null;
  // The base policy's (eval.base, before the cold start) and the starting policy's
  // (eval.before_training) evaluations travel with iteration 1's metrics.
  const evals = metrics.flatMap((m) => [
    ...(isObject(m.eval_base) ? [{ label: "base (no SFT)", m: undefined, e: m.eval_base }] : []),
    ...(isObject(m.eval_before_training) ? [{ label: "0 (start)", m: undefined, e: m.eval_before_training }] : []),
    ...(isObject(m.eval) ? [{ label: String(m.iteration), m, e: m.eval }] : []),
  ]);
  const ks = [...new Set(evals.flatMap((x) => Object.keys(x.e).filter((k) => /^pass@\d+$/.test(k))))].sort();
  const rows: string[][] = [["iteration", "train success", "reward", ...ks.map((k) => `eval ${k} [95% CI]`)]];
  const final = last(metrics);
  for (const { label, m, e } of evals.length > 0
    ? evals
    : [{ label: String(final.iteration), m: final, e: {} as Record<string, number> }]) {
    rows.push([
      label,
      fmt(m?.success),
      fmt(m?.reward),
      ...ks.map((k) => (e[k] === undefined ? "-" : `${fmt(e[k])} [${fmt(e[`${k}_low`])}, ${fmt(e[`${k}_high`])}]`)),
    ]);
  }
  const header = at(rows, 0);
  const widths = header.map((_, c) => Math.max(...rows.map((r) => at(r, c).length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => cell.padEnd(at(widths, c)))
      .join("  ")
      .trimEnd();
  const time = metrics.reduce<{ rollout: number; reward: number; update: number; before: number; total: number }>(
    (t, m) => {
      const x = (m.time ?? {}) as Record<string, number>;
      // The phases before iteration 1 ride with it and are counted in its total_s.
      const before = (x.base_eval_s ?? 0) + (x.sft_s ?? 0) + (x.eval_before_s ?? 0);
      return {
        rollout: t.rollout + (x.rollout_s ?? 0),
        reward: t.reward + (x.reward_s ?? 0),
        update: t.update + (x.update_s ?? 0),
        before: t.before + before,
        total: t.total + (x.total_s ?? 0),
      };
    },
    { rollout: 0, reward: 0, update: 0, before: 0, total: 0 },
  );
  const first = (metrics[0]?.time ?? {}) as Record<string, number>;
  const beforeParts = [
    ["base eval", first.base_eval_s],
    ["cold start", first.sft_s],
    ["evaluation before training", first.eval_before_s],
  ].flatMap(([name, x]) => (typeof x === "number" ? [`${String(name)} ${x.toFixed(1)} s`] : []));
  const where =
    time.before > 0 || beforeParts.length > 0
      ? `in all, ${time.before.toFixed(1)} s before iteration 1 (${beforeParts.join(", ")}); in iterations`
      : "in iterations";
  return [
    line(header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.slice(1).map(line),
    `time: ${time.total.toFixed(1)} s ${where} (rollout ${time.rollout.toFixed(1)} s, rewards and advantages ${time.reward.toFixed(1)} s, updates ${time.update.toFixed(1)} s)`,
    ...coldStartLine(metrics[0]?.sft),
    ...warningLines(metrics),
    "",
  ].join("\n");
}

/** The watchdog's warnings (metrics lines' `warnings`): per code, the iterations it fired in and its latest message. */
function warningLines(metrics: readonly Record<string, unknown>[]): string[] {
  const byCode = new Map<string, { iterations: number[]; message: string }>();
  for (const m of metrics) {
    if (!Array.isArray(m.warnings)) continue;
    for (const w of m.warnings as { code: string; message: string }[]) {
      const seen = byCode.get(w.code) ?? { iterations: [], message: w.message };
      byCode.set(w.code, { iterations: [...seen.iterations, Number(m.iteration)], message: w.message });
    }
  }
  return [...byCode].map(
    ([code, { iterations, message }]) =>
      `WARNING [${code}] in ${iterations.length === 1 ? "iteration" : "iterations"} ${iterations.join(", ")}: ${message}`,
  );
}

/** The cold start's line (its summary travels with iteration 1): what it trained on, first and last epoch's losses. */
function coldStartLine(sft: unknown): string[] {
  if (typeof sft !== "object" || sft === null) return [];
  const s = sft as {
    demos: number;
    records: number;
    heldout_records: number;
    epochs: { train_nll: number; heldout_nll: number | null }[];
  };
  const first = s.epochs[0];
  const final = s.epochs[s.epochs.length - 1];
  if (!first || !final) return [];
  const heldout =
    first.heldout_nll !== null && final.heldout_nll !== null
      ? `, held-out ${first.heldout_nll.toFixed(3)} -> ${final.heldout_nll.toFixed(3)} (${s.heldout_records} records)`
      : "";
  return [
    `sft: ${s.demos} walkthroughs and ${s.records} records over ${s.epochs.length} epochs, train NLL ${first.train_nll.toFixed(3)} -> ${final.train_nll.toFixed(3)} per token${heldout}`,
  ];
}
