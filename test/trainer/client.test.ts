// The runtime's trainer client against a protocol double in a real child process.
import { execa } from "execa";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ragged } from "../../src/contracts/trainer-protocol.js";
import { TrainerClient, TrainerError } from "../../src/trainer/protocol/client.js";

const double = fileURLToPath(new URL("../doubles/protocol-trainer.mjs", import.meta.url));
/** The double; `deadlineMs` applies to requests after the handshake (which a loaded machine may take seconds to answer). */
const start = (mode: string, deadlineMs?: number, stop?: AbortSignal) =>
  TrainerClient.start(
    {
      file: process.execPath,
      args: [double],
      env: { ARL_DOUBLE_MODE: mode },
      ...(deadlineMs !== undefined ? { deadlineMs: (m: string) => (m === "handshake" ? 60_000 : deadlineMs) } : {}),
    },
    "test",
    stop,
  );
/** A "trainer" that runs `script` with node (it never answers the handshake). */
const scripted = (script: string, deadlineMs = 60_000): Promise<TrainerError> =>
  TrainerClient.start({ file: process.execPath, args: ["-e", script], deadlineMs: () => deadlineMs }, "test").then(
    () => {
      throw new Error("the scripted trainer was expected to fail its handshake");
    },
    (e: unknown) => e as TrainerError,
  );
const alive = (pid: number) => execa("kill", ["-0", String(pid)], { reject: false }).then((r) => r.exitCode === 0);

describe("trainer client", () => {
  it("handshakes, sends bulk arrays, and shuts the trainer down", async () => {
    const client = await start("ok");
    expect(client.handshakeResult?.trainer.name).toBe("protocol-double");
    const result = await client.request("generate", {
      prompts: ragged(
        [
          [1, 2, 3],
          [4, 5],
        ],
        Int32Array,
      ),
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

  it("lets a trainer that answered shutdown take its time to exit: its stdout closing first is no fault", async () => {
    const client = await start("slow-exit");
    await client.shutdown();
    expect(client.exit).toEqual({ code: 0, signal: null });
  });

  it("turns an error response into a TrainerError with its code", async () => {
    const client = await start("ok");
    await expect(client.request("eval_op", { op: "nope", input: [] })).rejects.toMatchObject({ code: "unsupported" });
    await expect(client.request("values", { ids: ragged([[1]], Int32Array) })).rejects.toMatchObject({
      code: "unsupported",
    });
    await client.shutdown();
  });

  it("rejects a request whose params cannot be framed, leaving nothing pending: the next request is answered and no deadline fires", async () => {
    const client = await start("ok", 1_500);
    let input: unknown = 1;
    for (let i = 0; i < 20_000; i++) input = [input];
    await expect(client.request("eval_op", { op: "sum", input })).rejects.toThrow(/call stack/);
    expect(await client.request("eval_op", { op: "sum", input: [1, 2] })).toEqual({ output: 3 });
    // The refused request's deadline would have declared the trainer dead by now.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await client.request("eval_op", { op: "sum", input: [4] })).toEqual({ output: 4 });
    await client.shutdown();
  });

  it("reports a trainer that dies mid-request with its exit status and the last lines of its stderr", async () => {
    const client = await start("crash-on-generate");
    const error = (await client
      .request("generate", {
        prompts: ragged([[1]], Int32Array),
        max_new_tokens: 1,
        temperature: 1,
        top_p: 1,
        top_k: 0,
        stop_ids: [],
        seeds: Int32Array.from([0]),
        policy: "current",
      })
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
      .request("generate", {
        prompts: ragged([[1]], Int32Array),
        max_new_tokens: 1,
        temperature: 1,
        top_p: 1,
        top_k: 0,
        stop_ids: [],
        seeds: Int32Array.from([0]),
        policy: "current",
      })
      .catch((e: unknown) => e)) as TrainerError;
    expect(error.code).toBe("protocol");
    expect(error.message).toContain("did the trainer print to stdout?");
  });

  it("declares a trainer stopped with SIGSTOP dead at its request's deadline, and kills it", async () => {
    const client = await start("ok", 800);
    const pid = client.pid!;
    process.kill(pid, "SIGSTOP");
    const begun = Date.now();
    const error = (await client.request("eval_op", { op: "sum", input: [1] }).catch((e: unknown) => e)) as TrainerError;
    expect(error).toBeInstanceOf(TrainerError);
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("did not answer 'eval_op' within 0.8 s");
    expect(error.stderrTail).toContain("double: starting in mode ok");
    expect(Date.now() - begun).toBeLessThan(10_000);
    await client.kill();
    expect(await alive(pid)).toBe(false);
    await expect(client.request("eval_op", { op: "sum", input: [] })).rejects.toMatchObject({ code: "timeout" });
  });

  it("declares dead a trainer that closes its stdout but stays alive", async () => {
    const error = await scripted("require('node:fs').closeSync(1); setInterval(() => undefined, 1000)");
    expect(error).toBeInstanceOf(TrainerError);
    expect(error.message).toContain("closed its stdout while still running");
  });

  it("stops at once when asked while a request waits on a stopped trainer", async () => {
    const stop = new AbortController();
    const client = await start("ok", undefined, stop.signal);
    process.kill(client.pid!, "SIGSTOP");
    const pending = client.request("eval_op", { op: "sum", input: [1] }).then(
      () => new TrainerError("answered", "internal"),
      (e: unknown) => e as TrainerError,
    );
    setTimeout(() => stop.abort(), 200);
    const begun = Date.now();
    const error = await pending;
    expect(error.code).toBe("stopped");
    expect(Date.now() - begun).toBeLessThan(5_000);
    await client.kill();
  });

  it("shows the first fault line of a long stderr with its last lines, bounded", async () => {
    const script = `
      process.stderr.write("loading weights\\n");
      process.stderr.write("Traceback (most recent call last):\\n  File \\"train.py\\", line 3\\nValueError: shapes do not match\\n");
      for (let i = 0; i < 500; i++) process.stderr.write("noise " + i + "\\n");
      process.stderr.write("x".repeat(1000000));
      process.exitCode = 1; // not process.exit(): that drops what a full pipe has not taken yet`;
    const error = await scripted(script);
    expect(error).toBeInstanceOf(TrainerError);
    const tail = error.stderrTail;
    expect(tail[0]).toBe("Traceback (most recent call last):");
    expect(tail[1]).toMatch(/^\.\.\. \(\d+ lines left out\)$/);
    expect(tail).toContain("noise 499");
    expect(tail.length).toBeLessThanOrEqual(42);
    expect(tail.at(-1)!.length).toBeLessThan(3000);
    expect(tail.join("\n").length).toBeLessThan(120_000);
  });
});
