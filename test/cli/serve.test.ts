// `arl serve` as the process `arl run --engine-command` starts: on port 0 it prints one line with
// the URL it listens on and nothing else on stdout, answers vLLM's token-in completion from the
// plan's embedded trainer, and exits 0 on SIGTERM with its trainer shut down. Bad flags are usage
// errors (exit 2) with their reason.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { keepAliveExchange, rawExchange } from "../helpers/raw-http.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));

const SPEC = `
experiment served {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 8 } }
  env counter {
    kind: subprocess
    command: ["counter-env"]
    signals { success { scope: outcome, type: bool } }
    tool step { description: "advance the counter" }
  }
  reward { success: outcome.success }
}
`;

function specFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "arl-serve-")), "served.arl");
  writeFileSync(file, SPEC);
  return file;
}

describe("arl serve", () => {
  it("listens on a free port, answers a token-id completion, and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, [arl, "serve", specFile(), "--api", "vllm", "--port", "0", "--seed", "7"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        const found = /^arl serve: listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
        if (found?.[1]) resolve(found[1]);
      });
      void exited.then((code) => reject(new Error(`arl serve exited (${code}) before listening: ${stderr}`)));
    });
    // A request target that is no URL used to end the process: now a 400, and it keeps serving.
    expect((await rawExchange(url, "GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n", { halfClose: false })).statuses).toEqual(
      [400],
    );
    // A 413 says Connection: close and closes, so a kept-alive client sends nothing more into it.
    const big = `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: ${64 * 1024 * 1024}\r\nConnection: keep-alive\r\n\r\n`;
    expect(await keepAliveExchange(url, [big, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"])).toEqual([
      { status: 413, headers: expect.stringMatching(/\r\nconnection: close/i) as unknown },
    ]);
    // No unbounded generation: past the plan's max_new_tokens (8) or the model's context (32,768), a 400.
    const refused = async (body: unknown) => {
      const answer = await fetch(`${url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: answer.status, param: ((await answer.json()) as { error?: { param?: string } }).error?.param };
    };
    expect(await refused({ prompt: [1, 2, 3], max_tokens: 1e9, ignore_eos: true })).toEqual({
      status: 400,
      param: "max_tokens",
    });
    expect(await refused({ prompt: Array.from({ length: 1_000_000 }, () => 5), max_tokens: 4 })).toEqual({
      status: 400,
      param: "prompt",
    });
    const res = await fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "builtin:tiny",
        prompt: [5, 6, 7],
        max_tokens: 4,
        seed: 3,
        logprobs: 0,
        return_token_ids: true,
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      choices: { token_ids: number[]; prompt_token_ids: number[]; logprobs: { token_logprobs: number[] } }[];
    };
    const choice = body.choices[0]!;
    expect(choice.prompt_token_ids).toEqual([5, 6, 7]);
    expect(choice.token_ids.length).toBeGreaterThan(0);
    expect(choice.logprobs.token_logprobs).toHaveLength(choice.token_ids.length);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stdout).toBe(`arl serve: listening on ${url}\n`);
  }, 30_000);

  it("refuses a missing or unknown --api, a bad port and a missing checkpoint as usage errors", async () => {
    const file = specFile();
    const cwd = path.dirname(file);
    for (const [args, message] of [
      [[file], /--api vllm or --api sglang/],
      [[file, "--api", "tgi"], /--api must be 'vllm' or 'sglang', not 'tgi'/],
      [[file, "--api", "vllm", "--port", "http"], /--port must be a port number/],
      [[file, "--api", "vllm", "--checkpoint", "nowhere"], /--checkpoint: no directory 'nowhere'/],
    ] as const) {
      const run = await runArl(["serve", ...args], { cwd });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });
});
