// The cold start's own records (sft-data.ts) as training sequences. Each record is rendered by
// the trainer's `encode` (its template and tokenizer: one implementation), one sequence per
// message; an assistant message's ids after the template's generation prompt are what the model
// would generate, so they are the targets (Role.generated, as a walkthrough's generated tokens) and
// everything else, the turn header included, is context, under the same loss mask as RL.
import { at } from "../../../contracts/checked.js";
import type { ChatMessage } from "../../../contracts/trainer-protocol.js";
import { row, rowCount } from "../../../contracts/trainer-protocol.js";
import { shuffled } from "../../../contracts/random.js";
import type { TrainerClient } from "../../../trainer/protocol/client.js";
import { Role } from "../../../episode/buffer.js";
import { afterPrefix, generationPromptIds } from "../../../episode/generation-prompt.js";
import type { RunStreams } from "../streams.js";
import type { SftData, SftRecord } from "./data.js";
import type { TrainSequence } from "../../update/train-batches.js";

const ROLE_OF: Record<ChatMessage["role"], number> = {
  system: Role.system,
  user: Role.prompt,
  tool: Role.observation,
  assistant: Role.generated,
};

export interface EncodedRecords {
  readonly train: readonly TrainSequence[];
  readonly heldout: readonly TrainSequence[];
  /** Records cut to harness.max_total_tokens. */
  readonly truncated: number;
  /** Records left without a target token by the cut (not trained on). */
  readonly skipped: number;
}

/** How many of `n` records a held-out `fraction` keeps out: at least one when any, never all. */
export function heldoutCount(n: number, fraction: number): number {
  if (fraction <= 0 || n < 2) return 0;
  return Math.min(n - 1, Math.max(1, Math.round(fraction * n)));
}

/**
 * Encodes every record, truncating one longer than `maxTokens` (harness.max_total_tokens: the
 * longest context an episode may reach) and skipping one the cut leaves without a target, then
 * splits them: a seeded draw of heldoutCount records is held out, the rest trained on.
 */
export async function encodeRecords(
  trainer: TrainerClient,
  data: SftData,
  fraction: number,
  maxTokens: number | null,
  streams: RunStreams,
): Promise<EncodedRecords> {
  const order = shuffled(data.records, streams.sftHeldout());
  const held = new Set(order.slice(0, heldoutCount(order.length, fraction)));
  const train: TrainSequence[] = [];
  const heldout: TrainSequence[] = [];
  let truncated = 0;
  let skipped = 0;
  for (const record of data.records) {
    const full = await encodeRecord(trainer, data.path, record);
    const cut = maxTokens !== null && full.ids.length > maxTokens;
    const ids = cut ? full.ids.slice(0, maxTokens) : full.ids;
    const roles = cut ? full.roles.slice(0, maxTokens) : full.roles;
    if (cut) truncated++;
    // Position 0 is never a target (nothing precedes it).
    if (!roles.some((r, k) => k > 0 && r === Role.generated)) {
      skipped++;
      continue;
    }
    const sequence: TrainSequence = {
      ids,
      roles,
      advantages: new Float32Array(0),
      oldLogprobs: new Float32Array(0),
      group: `sft:data:${record.line}`,
    };
    (held.has(record) ? heldout : train).push(sequence);
  }
  return { train, heldout, truncated, skipped };
}

async function encodeRecord(
  trainer: TrainerClient,
  file: string,
  record: SftRecord,
): Promise<{ ids: Int32Array; roles: Uint8Array }> {
  const { ids } = await trainer.request("encode", {
    messages: record.messages,
    add_generation_prompt: false,
    ...(record.tools ? { tools: record.tools } : {}),
  });
  const parts = Array.from({ length: rowCount(ids) }, (_, i) => row(ids, i));
  if (parts.length !== record.messages.length) {
    throw new Error(
      `encoding ${file}:${record.line}: the trainer returned ${parts.length} sequences for ${record.messages.length} messages (the protocol's encode returns one per message)`,
    );
  }
  // The header before the first assistant turn, from the message before it (the same message, so
  // the same template state, as in the record).
  const k = record.messages.findIndex((m) => m.role === "assistant");
  const tools = record.tools ? { tools: record.tools } : {};
  const before = record.messages.slice(0, k);
  const header =
    k > 0
      ? await generationPromptIds(async (prompt) => {
          const encoded = await trainer.request("encode", {
            messages: before,
            add_generation_prompt: prompt,
            context: k - 1,
            ...tools,
          });
          return [row(encoded.ids, rowCount(encoded.ids) - 1)];
        })
      : new Int32Array(0);
  const roles = parts.flatMap((p, i) => {
    const role = ROLE_OF[at(record.messages, i).role];
    // The assistant turn's header (`<|im_start|>assistant\n`) is the prompt the harness gives, not
    // what the model generates: context, as in an RL episode.
    const lead = role === Role.generated && afterPrefix(p, header) ? header.length : 0;
    return Array.from(p, (_, k) => (k < lead ? Role.prompt : role));
  });
  return { ids: Int32Array.from(parts.flatMap((p) => Array.from(p))), roles: Uint8Array.from(roles) };
}
