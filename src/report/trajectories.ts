// Trajectories as a reader sees them (`arl show`): buffer records grouped into episodes,
// selected by iteration, task and episode, and each cut into role spans (the runs of tokens one
// role produced) matched to the conversation's messages. The text of a span comes from the
// record's messages; decoding ids needs the run's tokenizer (see token-text.ts), used only for
// records without messages and for per-token views.
import { Role, type EndReason, type ToolCallRecord, type TrajectoryRecord } from "../episode/buffer.js";
import type { TokenText } from "./token-text.js";

export type RoleName = Exclude<keyof typeof Role, "padding">;

const ROLE_NAMES = new Map<number, RoleName | "padding">(
  Object.entries(Role).map(([name, id]) => [id, name as RoleName | "padding"]),
);

export interface Span {
  readonly role: RoleName;
  /** Token positions [start, end) in the record's ids. */
  readonly start: number;
  readonly end: number;
  /** The message this span encodes, when the record's messages line up with its spans. */
  readonly message?: { readonly role: string; readonly content: string; readonly toolCalls: readonly unknown[] };
  /** Tool calls the harness parsed from this span (generated spans only), with their results. */
  readonly toolCalls: readonly ToolCallRecord[];
}

export interface ShownTrajectory {
  /** The episode's index within its iteration: episodes numbered in buffer order (by group, then sample). */
  readonly episode: number;
  readonly record: TrajectoryRecord;
  readonly spans: readonly Span[];
  /** Whether every span carries its message's text (false: a record without messages, a turn cut off by its budget, or messages that do not line up). */
  readonly hasText: boolean;
  /** Messages of the conversation after the last span (a step record's later turns): not in this record's tokens. */
  readonly laterMessages: number;
  /** Messages that do not line up with the spans (the conversation as recorded is shown instead). */
  readonly unmatchedMessages: number;
  /** Distinct policy versions that generated tokens, ascending. */
  readonly policyVersions: readonly number[];
}

/** Which message role each span role encodes. */
const MESSAGE_ROLE: Record<RoleName, readonly string[]> = {
  system: ["system"],
  prompt: ["user"],
  generated: ["assistant"],
  pool: ["assistant"],
  rendered: ["assistant"],
  observation: ["tool", "user"],
};

function roleRuns(record: TrajectoryRecord): { role: RoleName; start: number; end: number }[] {
  const runs: { role: RoleName; start: number; end: number }[] = [];
  for (let i = 0; i < record.roles.length;) {
    const id = record.roles[i] ?? Role.padding;
    let j = i + 1;
    while (j < record.roles.length && record.roles[j] === id) j++;
    const name = ROLE_NAMES.get(id);
    if (name === undefined) throw new Error(`token ${i} has role id ${id}, which this version of arl does not know`);
    if (name !== "padding") runs.push({ role: name, start: i, end: j });
    i = j;
  }
  return runs;
}

/**
 * Spans of a record, each with its message while the spans line up one to one with the
 * conversation's messages: all of them for an episode record, those up to its model call for a
 * step record (history rerender), whose messages are the whole episode's. A turn cut off by its
 * token budget is generated but never becomes a message: the spans from there on have none.
 */
function spansOf(record: TrajectoryRecord): { spans: Span[]; matched: number } {
  const runs = roleRuns(record);
  const messages = record.messages ?? [];
  let matched = 0;
  while (
    matched < runs.length &&
    matched < messages.length &&
    MESSAGE_ROLE[runs[matched]?.role ?? "system"].includes(messages[matched]?.role ?? "")
  )
    matched++;
  // The k-th model turn of the episode is the k-th generated/pool/rendered span.
  let turn = -1;
  const spans = runs.map((r, i): Span => {
    const isTurn = r.role === "generated" || r.role === "pool" || r.role === "rendered";
    if (isTurn) turn++;
    const m = i < matched ? messages[i] : undefined;
    return {
      ...r,
      ...(m ? { message: { role: m.role, content: m.content, toolCalls: m.tool_calls ?? [] } } : {}),
      toolCalls: isTurn ? record.toolCalls.filter((c) => c.turn === turn) : [],
    };
  });
  return { spans, matched };
}

function versionsOf(record: TrajectoryRecord): number[] {
  return [...new Set(Array.from(record.versions).filter((v) => v >= 0))].sort((a, b) => a - b);
}

export interface Selection {
  readonly iteration?: number;
  readonly task?: number;
  /** An episode's index within the iteration, or its group and sample. */
  readonly episode?: number | { readonly group: number; readonly sample: number };
  /** At most this many episodes when neither task nor episode is given (0: all). */
  readonly limit: number;
}

/** A selection that matches nothing in the buffer; `message` says what the buffer does hold. */
export class SelectionError extends Error {}

export interface Selected {
  readonly iteration: number;
  readonly trajectories: readonly ShownTrajectory[];
  /** Episodes in the iteration that matched the filters, before the limit. */
  readonly matched: number;
  readonly episodesInIteration: number;
  readonly iterations: readonly number[];
}

const range = (xs: readonly number[]) =>
  xs.length === 0 ? "none" : xs.length === 1 ? String(xs[0]) : `${xs[0]}-${xs[xs.length - 1]}`;

export function selectTrajectories(records: readonly TrajectoryRecord[], selection: Selection): Selected {
  const iterations = [...new Set(records.map((r) => r.iteration))].sort((a, b) => a - b);
  const iteration = selection.iteration ?? iterations[iterations.length - 1];
  if (iteration === undefined) throw new SelectionError("the buffer holds no trajectories yet");
  if (!iterations.includes(iteration))
    throw new SelectionError(`iteration ${iteration} is not in the buffer; it holds iterations ${range(iterations)}`);
  // Episodes in buffer order; a step-wise episode (history rerender) has one record per model call.
  const episodes = new Map<string, TrajectoryRecord[]>();
  for (const r of records) {
    if (r.iteration !== iteration) continue;
    const key = `${r.group}/${r.sample}`;
    const list = episodes.get(key);
    if (list) list.push(r);
    else episodes.set(key, [r]);
  }
  const numbered = [...episodes.values()].map((rs, episode) => ({ episode, records: rs }));
  const { task, episode } = selection;
  let matching = numbered;
  if (task !== undefined) {
    matching = matching.filter((e) => e.records[0]?.task === task);
    if (matching.length === 0)
      throw new SelectionError(
        `no episode of iteration ${iteration} has task ${task}; its tasks are ${[...new Set(numbered.map((e) => e.records[0]?.task))].join(", ")}`,
      );
  }
  if (typeof episode === "number") {
    matching = matching.filter((e) => e.episode === episode);
    if (matching.length === 0)
      throw new SelectionError(
        `iteration ${iteration} has no episode ${episode}${task !== undefined ? ` of task ${task}` : ""}; it has episodes 0-${numbered.length - 1}`,
      );
  } else if (episode !== undefined) {
    matching = matching.filter((e) => e.records[0]?.group === episode.group && e.records[0].sample === episode.sample);
    if (matching.length === 0)
      throw new SelectionError(
        `iteration ${iteration} has no episode with group ${episode.group} and sample ${episode.sample}${task !== undefined ? ` of task ${task}` : ""}`,
      );
  }
  const limited =
    task === undefined && episode === undefined && selection.limit > 0 ? matching.slice(0, selection.limit) : matching;
  const trajectories = limited.flatMap((e) =>
    e.records.map((record) => {
      const { spans, matched } = spansOf(record);
      const messages = record.messages?.length ?? 0;
      const hasText = spans.length > 0 && matched === spans.length;
      return {
        episode: e.episode,
        record,
        spans,
        hasText,
        laterMessages: hasText ? messages - matched : 0,
        unmatchedMessages: hasText ? 0 : messages - matched,
        policyVersions: versionsOf(record),
      };
    }),
  );
  return { iteration, trajectories, matched: matching.length, episodesInIteration: numbered.length, iterations };
}

/** How a tool call ended: executed, refused by a constraint, or rejected (bad name or arguments). */
export function callOutcome(call: ToolCallRecord): "valid" | "blocked" | "error" {
  return call.blocked ? "blocked" : call.valid ? "valid" : "error";
}

export interface JsonOptions {
  /** Include per-token ids, roles, versions and log-probs. */
  readonly tokens: boolean;
  /** The run's tokenizer, when it can be had: token pieces, and the text of spans without a message. */
  readonly tokenText?: TokenText | undefined;
}

/** A span's text: its message's, else decoded from its ids when the tokenizer is at hand. */
export function spanText(
  t: ShownTrajectory,
  s: Span,
  tokenText: TokenText | undefined,
): { text: string; source: "messages" | "decoded" } | undefined {
  if (s.message) return { text: s.message.content, source: "messages" };
  if (tokenText) return { text: tokenText.decode(t.record.ids.subarray(s.start, s.end)), source: "decoded" };
  return undefined;
}

/** One trajectory as a JSON object with a fixed key order (a line of `arl show --format json`). */
export function trajectoryJson(t: ShownTrajectory, options: JsonOptions): Record<string, unknown> {
  const r = t.record;
  const end: EndReason = r.end;
  const tokenText = options.tokenText;
  return {
    iteration: r.iteration,
    episode: t.episode,
    env: r.env,
    task: r.task,
    group: r.group,
    sample: r.sample,
    step: r.step ?? null,
    end,
    reward: r.reward,
    rewards: Object.fromEntries(
      Object.keys(r.rewards)
        .sort()
        .map((k) => [k, r.rewards[k]]),
    ),
    turns: r.turns,
    policy_versions: t.policyVersions,
    generators: r.generators,
    has_text: t.hasText,
    later_messages: t.laterMessages,
    spans: t.spans.map((s) => {
      const text = spanText(t, s, options.tokenText);
      const calls = s.toolCalls.map((c) => ({
        name: c.name,
        arguments: c.arguments,
        outcome: callOutcome(c),
        result: c.result,
        error: c.error ?? null,
      }));
      return {
        role: s.role,
        start: s.start,
        end: s.end,
        text: text?.text ?? null,
        text_source: text?.source ?? null,
        tool_calls: calls,
      };
    }),
    tools: r.tools ?? null,
    ...(options.tokens
      ? {
          tokens: {
            ids: Array.from(r.ids),
            roles: Array.from(r.roles, (id) => ROLE_NAMES.get(id) ?? String(id)),
            versions: Array.from(r.versions),
            logprobs: Array.from(r.logprobs),
            advantages: r.advantages ? Array.from(r.advantages) : null,
            text: tokenText ? Array.from(r.ids, (id) => tokenText.piece(id)) : null,
          },
        }
      : {}),
  };
}

export const roleName = (id: number): string => ROLE_NAMES.get(id) ?? `role ${id}`;
