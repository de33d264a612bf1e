// TrainerPolicy's decodes: those asked for in one synchronous stretch (a gateway reply's text and
// its tokens' texts) go to the trainer as one decode request, each caller getting its own rows'
// texts, the same as alone; a decode asked for later is a request of its own.
import { expect, it } from "vitest";
import type { Method, Methods } from "../../src/contracts/trainer-protocol.js";
import { TrainerPolicy } from "../../src/episode/policy.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { tinyPolicy } from "../helpers/tiny-policy.js";

it("gathers the decodes of one stretch into one request, each caller's texts its own", async () => {
  const plan = compilePlans(counterSpec(""))[0]!;
  const { tiny, policy: alone } = await tinyPolicy(plan, ["counter", "at", "hello"]);
  const sent: number[] = [];
  const policy = new TrainerPolicy({
    request: async <M extends Method>(method: M, params: Methods[M][0]) => {
      if (method === "decode") sent.push((params as Methods["decode"][0]).ids.offsets.length - 1);
      return tiny.request(method, params);
    },
  });
  const [a] = await alone.encode([{ role: "user", content: "counter at hello" }], true);
  const b = await alone.tokenize("hello counter");
  const [text, tokens, other] = await Promise.all([policy.decode(a!), policy.decodeEach(b), policy.decode(b)]);
  expect(sent).toEqual([1 + b.length + 1]);
  expect([text, tokens, other]).toEqual([await alone.decode(a!), await alone.decodeEach(b), await alone.decode(b)]);
  expect(await policy.decode(b)).toBe(other);
  expect(sent).toHaveLength(2);
});
