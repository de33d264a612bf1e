// `arl show`'s text view of a trajectory: a header (where the episode came from, how it ended,
// its reward and terms), then each role span with its text and the tool calls parsed from it,
// coloured by role on a terminal. With `tokens`, every token's id, version and log-probability
// under the span, and its text where the run's tokenizer can be had (token-text.ts).
import type { TokenText } from "./token-text.js";
import { callOutcome, roleName, spanText, type ShownTrajectory, type Span } from "./trajectories.js";

export interface TextOptions {
  readonly color: boolean;
  readonly tokens: boolean;
  readonly tokenText?: TokenText | undefined;
}

const ANSI: Record<string, string> = {
  system: "\x1b[2m",
  prompt: "\x1b[36m",
  generated: "\x1b[32m",
  observation: "\x1b[33m",
  pool: "\x1b[35m",
  rendered: "\x1b[34m",
  header: "\x1b[1m",
  error: "\x1b[31m",
};

function paint(text: string, style: string, color: boolean): string {
  return color ? `${ANSI[style] ?? ""}${text}\x1b[0m` : text;
}

const indent = (text: string, by: string) =>
  text
    .split("\n")
    .map((l) => `${by}${l}`)
    .join("\n");

const number = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3));

function header(t: ShownTrajectory, color: boolean): string {
  const r = t.record;
  const terms = Object.keys(r.rewards)
    .sort()
    .map((k) => `${k} ${number(r.rewards[k] ?? 0)}`)
    .join(", ");
  const versions = t.policyVersions.length === 0 ? "none" : t.policyVersions.join(", ");
  const step = r.step === undefined ? "" : `, step ${r.step} (model call ${r.step + 1} of the episode)`;
  const pools = r.generators.filter((g) => g !== "policy");
  const pool = pools.length === 0 ? "" : `; turns by pool models: ${[...new Set(pools)].join(", ")}`;
  const title = `== iteration ${r.iteration}, episode ${t.episode}: env ${r.env}, task ${r.task}, group ${r.group}, sample ${r.sample}${step}`;
  return [
    paint(title, "header", color),
    `end ${r.end}; reward ${number(r.reward)}${terms ? ` (${terms})` : ""}; ${r.turns} turn${r.turns === 1 ? "" : "s"}, ${r.toolCalls.length} tool call${r.toolCalls.length === 1 ? "" : "s"}; ${r.ids.length} tokens; policy versions ${versions}${pool}`,
  ].join("\n");
}

function tokenLines(t: ShownTrajectory, s: Span, tokenText: TokenText | undefined): string {
  const r = t.record;
  const lines: string[] = [];
  for (let i = s.start; i < s.end; i++) {
    const version = r.versions[i] ?? -1;
    const lp = s.role === "generated" && version >= 0 ? (r.logprobs[i] ?? 0).toFixed(4) : "-";
    const piece = tokenText ? `  ${JSON.stringify(tokenText.piece(r.ids[i] ?? 0))}` : "";
    // The advantage only where the token was generated: elsewhere it is 0 by construction.
    const advantage = r.advantages && s.role === "generated" ? `  advantage ${(r.advantages[i] ?? 0).toFixed(4)}` : "";
    lines.push(
      `    ${String(i).padStart(6)}  id ${String(r.ids[i]).padStart(7)}  version ${version >= 0 ? String(version).padStart(3) : "  -"}  logprob ${lp}${advantage}${piece}`,
    );
  }
  return lines.join("\n");
}

function spanBlock(t: ShownTrajectory, s: Span, options: TextOptions): string {
  const count = s.end - s.start;
  const label = paint(`[${s.role}]`, s.role, options.color);
  const text = spanText(t, s, options.tokenText);
  const from =
    text === undefined ? " (no text: see the note)" : text.source === "decoded" ? " (text decoded from the ids)" : "";
  const lines = [`${label} ${count} token${count === 1 ? "" : "s"}${from}`];
  if (text) lines.push(paint(indent(text.text === "" ? "(empty)" : text.text, "  "), s.role, options.color));
  for (const c of s.toolCalls) {
    const outcome = callOutcome(c);
    const line = `  -> tool call ${c.name} ${JSON.stringify(c.arguments)}: ${outcome}${c.error ? ` (${c.error})` : ""}`;
    lines.push(outcome === "valid" ? line : paint(line, "error", options.color));
  }
  if (options.tokens) lines.push(tokenLines(t, s, options.tokenText));
  return lines.join("\n");
}

/** One trajectory as text, ending in a newline. */
export function trajectoryText(t: ShownTrajectory, options: TextOptions): string {
  const parts = [header(t, options.color)];
  for (const s of t.spans) parts.push(spanBlock(t, s, options));
  const messages = t.record.messages;
  if (t.laterMessages > 0)
    parts.push(
      `note: the conversation goes on for ${t.laterMessages} more message${t.laterMessages === 1 ? "" : "s"}, not in this record's tokens${t.record.step === undefined ? "" : " (the next steps' records hold them)"}`,
    );
  const untexted = t.spans.filter((s) => !s.message).length;
  if (t.unmatchedMessages > 0 && messages) {
    // Some messages do not line up with the spans: show the conversation as recorded.
    parts.push("note: the spans do not line up with the recorded messages; the conversation as recorded:");
    for (const m of messages) parts.push(`  (${m.role}) ${indent(m.content, "  ").trimStart()}`);
  } else if (untexted > 0 && messages && messages.length > 0) {
    const how = options.tokenText ? "its text is decoded from the ids" : "its text needs the run's tokenizer";
    parts.push(
      `note: the last ${untexted === 1 ? "span has" : `${untexted} spans have`} no recorded message (a turn cut off by its token budget is not added to the conversation); ${how}`,
    );
  } else if (untexted > 0 && !options.tokenText) {
    parts.push(
      "note: this record carries no messages (written by an older arl); only token ids are stored, and their text needs the run's tokenizer",
    );
  }
  return `${parts.join("\n")}\n\n`;
}

/** The legend of `--tokens`: what the token lines show and what they do not. */
export function tokensNote(tokenText: TokenText | { readonly unavailable: string }): string {
  const text =
    "source" in tokenText ? `and the token as ${tokenText.source}` : `(no token text: ${tokenText.unavailable})`;
  return `token lines: position, id, the policy version that generated it and its log-probability under the sampling distribution (generated tokens only; '-' elsewhere), ${text}; on generated tokens of a record the update trained on, the advantage it was trained with (records of rejected groups, excluded env errors or samples dropped for lag have none). Span roles: ${[0, 1, 2, 3, 5, 6].map(roleName).join(", ")}.\n`;
}
