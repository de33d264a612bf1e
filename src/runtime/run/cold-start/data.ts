// Your own cold-start data (rollout.sft.data): chat records, one JSON object a line, in the
// OpenAI chat shape ({"messages": [{role, content, tool_calls?}], "tools"?: [...]}). The file is
// found below the run's data root (confined to it, like an env's data files), read line by line
// (contracts/line-reader.ts: no size of file makes one string of it), hashed in the same pass and checked
// against the plan's sha256, and validated whole before the trainer sees a record, so that a bad
// line (not UTF-8, not JSON, longer than rollout.sft.max_record_bytes, not a chat record) is
// reported with its file:line before any weight changes.
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import type { ChatMessage, ToolCallMessage } from "../../../contracts/trainer-protocol.js";
import { refusalReason, resolveConfined } from "../../../contracts/confine.js";
import { boundOf } from "../../../plan/bounds.js";
import type { Plan } from "../../../plan/schema.js";
import { fileLines, lineText } from "../../../contracts/line-reader.js";

/** The plan's cold start with a record file: its reference ({path, sha256}, the path relative to the data root) and size bounds. */
export type SftDataSource = Pick<NonNullable<Plan["rollout"]["sft"]>, "max_data_bytes" | "max_record_bytes"> & {
  readonly data: NonNullable<NonNullable<Plan["rollout"]["sft"]>["data"]>;
};

/** The plan's record file with its bounds, or null without one. */
export function sftDataSource(plan: Plan): SftDataSource | null {
  const sft = plan.rollout.sft;
  return sft && sft.data !== null
    ? { data: sft.data, max_data_bytes: sft.max_data_bytes, max_record_bytes: sft.max_record_bytes }
    : null;
}

/** One valid record, in the shape of an encode request. */
export interface SftRecord {
  /** Its line in the file (1-based), for messages about it. */
  readonly line: number;
  readonly messages: readonly ChatMessage[];
  /** OpenAI function definitions; null when the record gives none. */
  readonly tools: readonly unknown[] | null;
}

export interface SftData {
  /** The plan's path of the file, for messages. */
  readonly path: string;
  readonly records: readonly SftRecord[];
}

/** A record file that cannot be trained on: the message lists every problem by file:line. */
export class SftDataError extends Error {}

const ROLES = new Set(["system", "user", "assistant", "tool"]);
/** At most this many problems are listed; the rest are counted. */
const LISTED = 20;

/** Reads, checks (confinement, size, sha256) and validates the plan's record file below `root`; `chunkBytes`: the reader's chunk size. */
export function loadSftData(source: SftDataSource, root: string | undefined, chunkBytes?: number): SftData {
  const file = source.data;
  const what = `rollout.sft.data '${file.path}'`;
  if (root === undefined)
    throw new SftDataError(
      `${what} cannot be located: this run was started without a data root ('arl run' passes the spec's folder or --data-root)`,
    );
  const confined = resolveConfined(file.path, root, [root]);
  if (!confined.ok)
    throw new SftDataError(
      `${what} is refused: ${refusalReason(confined.reason, root)} (the run's data root); it was not read`,
    );
  const unreadable = () =>
    new SftDataError(
      `${what} does not exist or cannot be read (looked for ${confined.path}; data paths are relative to ${root})`,
    );
  let size: number;
  try {
    const stat = statSync(confined.real);
    if (!stat.isFile()) throw new SftDataError(`${what} is not a regular file (${confined.real}); it was not read`);
    size = stat.size;
  } catch (error) {
    throw error instanceof SftDataError ? error : unreadable();
  }
  const tooLarge = (bytes: number) =>
    new SftDataError(
      `${what} holds ${bytes} bytes, more than rollout.sft.max_data_bytes (${source.max_data_bytes}); it was not read (raise max_data_bytes, at most ${boundOf("rollout.sft.max_data_bytes").max}, or cut the file)`,
    );
  if (size > source.max_data_bytes) throw tooLarge(size);
  const hash = createHash("sha256");
  let read = 0;
  const records: SftRecord[] = [];
  const problems = new ProblemList();
  try {
    const lines = fileLines(confined.real, {
      maxLineBytes: source.max_record_bytes,
      ...(chunkBytes !== undefined ? { chunkBytes } : {}),
      onChunk: (chunk) => {
        // A file that grows while it is read is not the one compiled against.
        read += chunk.length;
        if (read > source.max_data_bytes) throw tooLarge(read);
        hash.update(chunk);
      },
    });
    for (const line of lines) {
      const parsed =
        "tooLong" in line ? recordTooLong(line.tooLong, source.max_record_bytes) : parseSftLine(line.bytes);
      if (parsed === null) continue;
      if (typeof parsed === "string") problems.add(line.line, parsed);
      else records.push({ line: line.line, ...parsed });
    }
  } catch (error) {
    if (error instanceof SftDataError) throw error;
    if (typeof (error as NodeJS.ErrnoException).code === "string") throw unreadable();
    throw error;
  }
  const sha256 = hash.digest("hex");
  if (sha256 !== file.sha256) {
    throw new SftDataError(
      `${what} has sha256 ${sha256}, but the plan was compiled against ${file.sha256}; refusing to train on different data (recompile the spec if the change is intended)`,
    );
  }
  if (problems.count > 0) {
    const listed = problems.listed.map((p) => `\n  ${file.path}:${p.line}: ${p.message}`).join("");
    const more = problems.count > LISTED ? `\n  ... and ${problems.count - LISTED} more` : "";
    throw new SftDataError(
      `${what}: ${problems.count} invalid record${problems.count === 1 ? "" : "s"}; nothing was trained:${listed}${more}\n` +
        `each line is one JSON object {"messages": [{"role": "system"|"user"|"assistant"|"tool", "content": "..."}], "tools"?: [...]} with at least one assistant turn`,
    );
  }
  if (records.length === 0)
    throw new SftDataError(`${what} holds no record (every line is blank); give at least one, or remove sft.data`);
  return { path: file.path, records };
}

interface Problem {
  readonly line: number;
  readonly message: string;
}

/** The first LISTED problems and a count of all: a file of a million bad lines is not a million messages. */
class ProblemList {
  readonly listed: Problem[] = [];
  count = 0;
  add(line: number, message: string): void {
    if (this.count++ < LISTED) this.listed.push({ line, message });
  }
}

function recordTooLong(bytes: number, max: number): string {
  return `a record of ${bytes} bytes, more than rollout.sft.max_record_bytes (${max}): shorten or drop it, or raise max_record_bytes (at most ${boundOf("rollout.sft.max_record_bytes").max})`;
}

/** One line's record, what is wrong with it, or null for a blank line. */
function parseSftLine(bytes: Uint8Array): Omit<SftRecord, "line"> | string | null {
  const raw = lineText(bytes);
  // Replaced bytes would be trained on as U+FFFD.
  if (raw === null) return "not UTF-8 text (an invalid byte sequence); save the file as UTF-8";
  if (raw.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return `not a JSON line (${(error as Error).message})`;
  }
  return parseRecord(value);
}

/** Every record of `text` (blank lines skipped) and every problem, by line. */
export function parseSftRecords(text: string): { records: SftRecord[]; problems: Problem[] } {
  const records: SftRecord[] = [];
  const problems: Problem[] = [];
  const encoder = new TextEncoder();
  text.split("\n").forEach((raw, i) => {
    const parsed = parseSftLine(encoder.encode(raw));
    if (typeof parsed === "string") problems.push({ line: i + 1, message: parsed });
    else if (parsed !== null) records.push({ line: i + 1, ...parsed });
  });
  return { records, problems };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** One record in encode's shape, or what is wrong with it. */
function parseRecord(value: unknown): Omit<SftRecord, "line"> | string {
  if (!isObject(value)) return 'a record is a JSON object with a "messages" array';
  const tools = parseTools(value.tools);
  if (typeof tools === "string") return tools;
  const names = tools === null ? [] : tools.map((t) => t.function.name);
  if (!Array.isArray(value.messages) || value.messages.length === 0)
    return '"messages" must be a non-empty array of {role, content}';
  const messages: ChatMessage[] = [];
  for (const [i, m] of value.messages.entries()) {
    const message = parseMessage(m, names, tools !== null);
    if (typeof message === "string") return `messages[${i}]: ${message}`;
    messages.push(message);
  }
  if (!messages.some((m) => m.role === "assistant"))
    return "no assistant turn: the cold start trains on assistant turns, and this record has none";
  return { messages, tools };
}

function parseTools(tools: unknown): { type: "function"; function: { name: string } }[] | null | string {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools))
    return '"tools" must be an array of OpenAI function definitions {"type": "function", "function": {"name", ...}}';
  for (const [j, t] of tools.entries()) {
    if (
      !isObject(t) ||
      t.type !== "function" ||
      !isObject(t.function) ||
      typeof t.function.name !== "string" ||
      t.function.name === ""
    ) {
      return `tools[${j}]: not an OpenAI function definition {"type": "function", "function": {"name", "description"?, "parameters"?}}`;
    }
  }
  return tools as { type: "function"; function: { name: string } }[];
}

function parseMessage(m: unknown, tools: readonly string[], declared: boolean): ChatMessage | string {
  if (!isObject(m)) return "a message is an object {role, content}";
  const role = m.role;
  if (typeof role !== "string" || !ROLES.has(role))
    return `unknown role ${JSON.stringify(role)} (system, user, assistant or tool)`;
  const calls = m.tool_calls === undefined || m.tool_calls === null ? [] : m.tool_calls;
  if (!Array.isArray(calls)) return '"tool_calls" must be an array';
  if (calls.length > 0 && role !== "assistant")
    return `only assistant turns make tool calls, and this is a ${role} turn`;
  // OpenAI writes content null on an assistant turn that only calls tools.
  const content = m.content === null || (m.content === undefined && calls.length > 0) ? "" : m.content;
  if (typeof content !== "string") return '"content" must be a string';
  const toolCalls: ToolCallMessage[] = [];
  for (const [j, c] of calls.entries()) {
    const call = parseToolCall(c, tools, declared);
    if (typeof call === "string") return `tool_calls[${j}]: ${call}`;
    toolCalls.push(call);
  }
  return toolCalls.length > 0
    ? { role: role as ChatMessage["role"], content, tool_calls: toolCalls }
    : { role: role as ChatMessage["role"], content };
}

function parseToolCall(c: unknown, tools: readonly string[], declared: boolean): ToolCallMessage | string {
  const fn = isObject(c) ? c.function : undefined;
  if (!isObject(fn) || typeof fn.name !== "string" || fn.name === "")
    return 'not an OpenAI tool call {"type": "function", "function": {"name", "arguments"}}';
  if (!tools.includes(fn.name)) {
    return declared
      ? `calls '${fn.name}', which is not in the record's tools (${tools.join(", ")})`
      : `calls '${fn.name}', and the record declares no tools (give them in its "tools")`;
  }
  let args: unknown = fn.arguments ?? {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      return `the arguments of '${fn.name}' are a string that is not JSON`;
    }
  }
  if (!isObject(args)) return `the arguments of '${fn.name}' must be a JSON object (or a string holding one)`;
  return { name: fn.name, arguments: args };
}

/** The words of the records' messages, for the embedded model's vocabulary (the harness's word split). */
export function sftVocabulary(data: SftData): string[] {
  const words = new Set<string>();
  for (const record of data.records)
    for (const m of record.messages)
      for (const w of m.content.match(/[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g) ?? []) words.add(w);
  return [...words].sort();
}
