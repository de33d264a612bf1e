// The policy gathers concurrent generate calls into one request, including those of episodes whose
// prompt was still being encoded when the first call came: a trainer process answers encodes one
// frame at a time, so they come back over several ticks (src/episode/policy.ts).
import { describe, expect, it } from "vitest";
import type { Method, Methods } from "../../src/contracts/trainer-protocol.js";
import { TrainerPolicy, type TrainerRequests } from "../../src/episode/policy.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { tinyConfigure } from "../helpers/tiny-policy.js";

const VOCABULARY = ["go", "north", "south", "look", "take", "key"];

describe("TrainerPolicy generate batching", () => {
  it("sends one generate request for episodes whose encodes are answered in different ticks", async () => {
    const tiny = new TinyTrainer({ embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 });
    await tiny.init();
    tiny.configure(tinyConfigure(3, VOCABULARY));
    const generates: number[] = [];
    let answered = 0;
    // The embedded trainer's own answers; each encode's arrives a macrotask after the one before,
    // as a trainer process's frames do.
    const requests: TrainerRequests = {
      request: async <M extends Method>(method: M, params: Methods[M][0]) => {
        const result = tiny.request(method, params);
        if (method === "generate") generates.push((params as Methods["generate"][0]).seeds.length);
        if (method === "encode") await new Promise((r) => setTimeout(r, 2 * ++answered));
        return result;
      },
    };
    const policy = new TrainerPolicy(requests);
    const options = { maxNewTokens: 4, temperature: 1, topP: 1, topK: 0, stopIds: [] };
    const episode = async (i: number) => {
      const prompt = (await policy.encode([{ role: "user", content: "go north" }], true)).flatMap((ids) => [...ids]);
      return policy.generate(Int32Array.from(prompt), { ...options, seed: i });
    };
    const generations = await Promise.all(Array.from({ length: 6 }, (_, i) => episode(i)));
    expect(generates).toEqual([6]);
    expect(generations.every((g) => g.ids.length > 0 && g.ids.length <= 4)).toBe(true);
  });
});
