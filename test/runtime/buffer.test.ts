import { appendFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readBuffer, Role, TokenBuffer, type TrajectoryRecord } from "../../src/episode/buffer.js";
import { encodeFrame } from "../../src/trainer/protocol/framing.js";

function record(iteration: number, sample: number): TrajectoryRecord {
  return {
    iteration,
    env: "quest",
    task: 17,
    group: 0,
    sample,
    ids: Int32Array.from([5, 6, 7, 8, 9]),
    roles: Uint8Array.from([Role.system, Role.prompt, Role.generated, Role.generated, Role.observation]),
    versions: Int32Array.from([-1, -1, 3, 3, -1]),
    logprobs: Float32Array.from([0, 0, -0.25, -1.5, 0]),
    generators: ["policy"],
    rewards: { success: 1, tool_cost: -0.02 },
    reward: 0.98,
    end: "finished",
    turns: 1,
    toolCalls: [{ turn: 0, name: "look", arguments: {}, valid: true, blocked: false, result: "a room" }],
  };
}

const dir = () => mkdtempSync(path.join(tmpdir(), "arl-buffer-"));

describe("token buffer", () => {
  it("stores the exact ids, roles, versions and log-probs of each trajectory", () => {
    const file = path.join(dir(), "buffer.arlbuf");
    const buffer = new TokenBuffer(file);
    buffer.append([record(0, 0), record(0, 1)]);
    buffer.sync();
    buffer.close();
    const { records, partialBytes } = readBuffer(file);
    expect(partialBytes).toBe(0);
    expect(records).toEqual([record(0, 0), record(0, 1)]);
  });

  it("after a crash mid-write, keeps every complete record and reports the partial one", () => {
    const file = path.join(dir(), "buffer.arlbuf");
    const buffer = new TokenBuffer(file);
    buffer.append([record(0, 0)]);
    const checkpointOffset = buffer.offset;
    buffer.close();
    const torn = encodeFrame(record(1, 0)).subarray(0, 40);
    appendFileSync(file, torn);
    const afterCrash = readBuffer(file);
    expect(afterCrash.records).toEqual([record(0, 0)]);
    expect(afterCrash.partialBytes).toBe(40);

    // Resume cuts back to the checkpoint's offset and appends from there.
    const resumed = new TokenBuffer(file, checkpointOffset);
    expect(statSync(file).size).toBe(checkpointOffset);
    resumed.append([record(1, 0)]);
    resumed.close();
    expect(readBuffer(file).records).toEqual([record(0, 0), record(1, 0)]);
  });
});
