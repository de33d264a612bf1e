// The runtime's trainer client against a protocol double in a real child process.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TrainerClient, TrainerError } from "../../src/trainer/protocol/client.js";
import { ragged } from "../../src/trainer/protocol/messages.js";

const double = fileURLToPath(new URL("../doubles/protocol-trainer.mjs", import.meta.url));
const start = (mode: string) => TrainerClient.start({ file: process.execPath, args: [double], env: { ARL_DOUBLE_MODE: mode } }, "test");

describe("trainer client", () => {
  it("handshakes, sends bulk arrays, and shuts the trainer down", async () => {
    const client = await start("ok");
    expect(client.handshakeResult?.trainer.name).toBe("protocol-double");
    const result = await client.request("generate", {
      prompts: ragged([[1, 2, 3], [4, 5]], Int32Array),
      max_new_tokens: 4,
      temperature: 1,
      top_p: 1,
      top_k: 0,
      stop_ids: [],
      seeds: Int32Array.from([1, 2]),
      policy: "current",
    });
    expect(Array.from(result.ids.values)).toEqual([3, 2, 1, 5, 4]);
    expect(result.finish).toEqual(["stop", "stop"]);
    expect(await client.request("eval_op", { op: "sum", input: [1, 2, 3] })).toEqual({ output: 6 });
    await client.shutdown();
  });

  it("turns an error response into a TrainerError with its code", async () => {
    const client = await start("ok");
    await expect(client.request("eval_op", { op: "nope", input: [] })).rejects.toMatchObject({ code: "unsupported" });
    await expect(client.request("values", { ids: ragged([[1]], Int32Array) })).rejects.toMatchObject({ code: "unsupported" });
    await client.shutdown();
  });

  it("reports a trainer that dies mid-request with its exit status and the last lines of its stderr", async () => {
    const client = await start("crash-on-generate");
    const error = (await client
      .request("generate", { prompts: ragged([[1]], Int32Array), max_new_tokens: 1, temperature: 1, top_p: 1, top_k: 0, stop_ids: [], seeds: Int32Array.from([0]), policy: "current" })
      .catch((e: unknown) => e)) as TrainerError;
    expect(error).toBeInstanceOf(TrainerError);
    expect(error.code).toBe("died");
    expect(error.message).toContain("exited with status 3");
    expect(error.stderrTail).toContain("double: simulated out-of-memory in generate");
    await expect(client.request("eval_op", { op: "sum", input: [] })).rejects.toMatchObject({ code: "died" });
  });

  it("refuses a trainer that prints text on stdout", async () => {
    const client = await start("garbage");
    const error = (await client
      .request("generate", { prompts: ragged([[1]], Int32Array), max_new_tokens: 1, temperature: 1, top_p: 1, top_k: 0, stop_ids: [], seeds: Int32Array.from([0]), policy: "current" })
      .catch((e: unknown) => e)) as TrainerError;
    expect(error.code).toBe("protocol");
    expect(error.message).toContain("did the trainer print to stdout?");
  });
});
